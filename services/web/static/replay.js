// The replay viewer: the server sends every frame (the whole table at each step); this draws frame i.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("replay").textContent);
  const frames = data.frames;
  function heldAt(f) {
    // the deal less the plays made so far in the hand (services/web/replay.py: held_at)
    if (f.hand_index < 0) return [];
    const hand = data.hands[f.hand_index];
    const gone = new Set(hand.plays.slice(0, f.played).map((p) => p[1]));
    return hand.deal.map((cards) => cards.filter((c) => !gone.has(c)));
  }
  const seats = [...document.querySelectorAll("#seats .seat")];
  const names = seats.map((el) => el.querySelector("h3 .name").textContent);
  const scrub = document.getElementById("scrub");
  const playButton = document.getElementById("play");
  const scores = document.querySelector("#scores tbody");
  let index = 0, timer = null;

  function scoreRows(upTo) {
    // one row per finished hand up to frame upTo: "points (total)"
    const rows = [];
    for (let i = 0; i <= upTo; i++) {
      const f = frames[i];
      if (f.points) {
        rows.push(scoreRow(String(data.hands[f.hand_index].number), f.points.map((p, s) => `${p >= 0 ? "+" : ""}${p} (${f.totals[s]})`)));
      }
    }
    scores.replaceChildren(...rows);
    document.getElementById("no-scores").hidden = rows.length > 0;
  }

  function trickList(f) {
    // the hand's tricks so far, in the order their cards were played, each with its winner once
    // the frame that says so has been reached (the trick on the table is the last one)
    const list = document.getElementById("tricks");
    const h = f.hand_index >= 0 ? data.hands[f.hand_index] : null;
    const items = [];
    const n = seats.length;
    const unannounced = f.trick.length === n && f.trick_winner === undefined;
    for (let t = 0; h && t * n < f.played; t++) {
      const li = document.createElement("li");
      for (const [seat, card] of h.plays.slice(t * n, Math.min((t + 1) * n, f.played))) {
        const play = document.createElement("span");
        play.className = "play";
        play.append(`${names[seat]} `, cardEl(card));
        li.append(play);
      }
      const done = (t + 1) * n <= f.played && !(unannounced && (t + 1) * n === f.played);
      const result = document.createElement("b");
      result.className = "trick-winner";
      result.textContent = done ? `→ ${names[h.winners[t]]} wins` : "…";
      li.append(result);
      items.push(li);
    }
    list.replaceChildren(...items);
    document.getElementById("no-tricks").hidden = items.length > 0;
    document.getElementById("tricks-title").textContent = h ? `Tricks of hand ${h.number}` : "Tricks of this hand";
  }

  function show(i) {
    index = Math.max(0, Math.min(frames.length - 1, i));
    const f = frames[index];
    document.getElementById("caption").textContent = f.caption;
    document.getElementById("position").textContent = `step ${index + 1} of ${frames.length}`;
    const h = f.hand_index >= 0 ? data.hands[f.hand_index] : null;
    const winner = f.trick_winner ?? null;
    document.getElementById("hand-info").textContent =
      h ? `hand ${h.number}${h.sudden_death ? " (sudden death)" : ""} · ${h.size} cards · trump ${h.trump ? cardFace(h.trump) : "none"}` : "";
    scrub.value = index;
    const held = heldAt(f);
    seats.forEach((el, s) => {
      el.querySelector(".bid").textContent = f.bids[s] === null || f.bids[s] === undefined || f.bids[s] < 0 ? "–" : f.bids[s];
      el.querySelector(".won").textContent = f.won[s] ?? 0;
      el.querySelector(".total").textContent = f.totals[s];
      el.querySelector(".dealer").hidden = !h || h.dealer !== s;
      el.classList.toggle("acting", f.acting === s && winner === null);
      el.classList.toggle("took", winner === s);
      // said in words too, not by the border's colour alone
      const playing = f.trick.length > 0 && f.trick[f.trick.length - 1][0] === s;
      el.querySelector(".doing").textContent =
        winner === s ? "wins the trick" : f.acting === s && winner === null ? (playing ? "plays" : "bids") : "";
      const played = f.trick.filter((p) => p[0] === s).map((p) => p[1]);
      fill(el.querySelector(".played"), played);
      fill(el.querySelector(".cards"), held[s] || []);
    });
    scoreRows(index);
    trickList(f);
    document.body.dataset.step = String(index);
    document.body.dataset.atEnd = String(index === frames.length - 1);
  }

  function stop() { clearInterval(timer); timer = null; playButton.textContent = "▶ play"; }
  function play() {
    if (timer) return stop();
    if (index === frames.length - 1) show(0);
    playButton.textContent = "❚❚ pause";
    timer = setInterval(() => { if (index >= frames.length - 1) stop(); else show(index + 1); }, 450);
  }

  document.getElementById("first").onclick = () => { stop(); show(0); };
  document.getElementById("prev").onclick = () => { stop(); show(index - 1); };
  document.getElementById("next").onclick = () => { stop(); show(index + 1); };
  document.getElementById("last").onclick = () => { stop(); show(frames.length - 1); };
  playButton.onclick = play;
  scrub.oninput = () => { stop(); show(Number(scrub.value)); };
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea, select")) return;
    if ((e.key === " " || e.key === "Enter") && e.target.closest("button, a")) return;  // it presses what has the focus
    const keys = { ArrowRight: () => show(index + 1), ArrowLeft: () => show(index - 1),
      Home: () => show(0), End: () => show(frames.length - 1), " ": play };
    if (keys[e.key]) { e.preventDefault(); if (e.key !== " ") stop(); keys[e.key](); }
  });
  show(0);
})();
