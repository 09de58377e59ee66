// The live view: public events from the engine's spectate stream (server-sent events).
// Only what is public is ever drawn: cards as they are played, the turned trump, bids when revealed.
"use strict";
(function () {
  const config = JSON.parse(document.getElementById("live-config").textContent);
  const seatsEl = document.getElementById("seats");
  const scores = document.querySelector("#scores tbody");
  const status = document.getElementById("status");
  let names = config.names || [], seats = [], bids = [], won = [], totals = [], trick = [], events = 0;
  let doing = null;  // [seat, what it just did] of the last event, said in words by its seat

  function build(count) {
    seatsEl.replaceChildren();
    seats = [];
    const head = document.getElementById("score-head");
    head.replaceChildren(head.firstElementChild);
    for (let s = 0; s < count; s++) {
      const el = document.createElement("section");
      el.className = "seat";
      el.dataset.seat = s;
      el.innerHTML = '<h3><span class="name"></span> <span class="doing"></span></h3><p class="seat-line">bid <b class="bid">–</b> · won <b class="won">0</b> · total <b class="total">0</b></p><div class="played"></div>';
      el.querySelector(".name").replaceChildren(seatName(s));
      seatsEl.appendChild(el);
      seats.push(el);
      const th = document.createElement("th");
      th.className = "num";
      th.textContent = names[s] || `seat ${s}`;
      head.appendChild(th);
    }
    bids = Array(count).fill(null); won = Array(count).fill(0); totals = Array(count).fill(0);
  }

  function seatName(s) {
    // a ladder's seat links to its agent's page (as on the replay); a challenge's seats have no agent ids here
    const agent = (config.agents || [])[s];
    if (!agent) return document.createTextNode(names[s] || `seat ${s}`);
    const link = document.createElement("a");
    link.href = `/agents/${encodeURIComponent(agent)}?ladder=${encodeURIComponent(config.ladder || "")}`;
    link.textContent = names[s] || `seat ${s}`;
    return link;
  }

  function draw(caption) {
    document.getElementById("caption").textContent = caption;
    seats.forEach((el, s) => {
      el.querySelector(".bid").textContent = bids[s] === null ? "–" : bids[s];
      el.querySelector(".won").textContent = won[s];
      el.querySelector(".total").textContent = totals[s];
      fill(el.querySelector(".played"), trick.filter((p) => p.seat === s).map((p) => p.card));
      el.querySelector(".doing").textContent = doing && doing[0] === s ? doing[1] : "";
      el.classList.toggle("took", !!doing && doing[0] === s && doing[1] === "wins the trick");
    });
    document.getElementById("no-scores").hidden = scores.rows.length > 0;
    document.body.dataset.events = String(events);
  }

  const name = (s) => names[s] || `seat ${s}`;
  const handlers = {
    match_started(e) { names = e.seats.map((s) => s.name); build(e.seats.length); return "the match starts"; },
    hand_started(e) {
      bids = bids.map(() => null); won = won.map(() => 0); trick = [];
      const trump = e.trump_card && e.trump_card !== "" ? cardFace(e.trump_card) : "none";
      document.getElementById("hand-info").textContent = `hand ${e.hand_number} · ${e.hand_size} cards · trump ${trump}`;
      return `hand ${e.hand_number}: ${name(e.dealer)} deals`;
    },
    bid_made(e) { bids[e.seat] = e.bid; doing = [e.seat, "bids"]; return `${name(e.seat)} bids ${e.bid}`; },
    card_played(e) {
      if (trick.length && trick.done) trick = [];
      trick.push({ seat: e.seat, card: e.card });
      doing = [e.seat, "plays"];
      return `${name(e.seat)} plays ${cardFace(e.card)}`;
    },
    trick_won(e) {
      const w = e.trick.winner;
      won[w] += 1; trick.done = true; doing = [w, "wins the trick"];
      return `${name(w)} wins the trick`;
    },
    hand_ended(e) {
      totals = e.totals.slice(); trick = [];
      scores.appendChild(scoreRow(String(e.hand_number), e.points.map((p, s) => `${p >= 0 ? "+" : ""}${p} (${e.totals[s]})`)));
      return `end of hand ${e.hand_number}`;
    },
    fault(e) { return `fault: ${name(e.seat)} ${e.kind.replace("FAULT_KIND_", "").toLowerCase()}`; },
    match_ended(e) {
      totals = e.totals.slice();
      if (e.aborted) return "match aborted before its end: no winner";
      return `match over: ${e.winners.map(name).join(" and ")} ${e.winners.length > 1 ? "win" : "wins"}`;
    },
  };

  const source = new EventSource(config.events);
  source.addEventListener("match", (message) => {
    const event = JSON.parse(message.data);
    events += 1;
    const handler = handlers[event.kind];
    doing = null;
    if (handler) draw(handler(event));
    status.textContent = "live";
  });
  source.addEventListener("done", () => { source.close(); status.textContent = "finished"; document.getElementById("done").hidden = false; });
  source.addEventListener("failed", (message) => {
    // no feed is no end: the match may be playing on ("The match is over" was shown here too)
    source.close();
    const failed = JSON.parse(message.data);
    const unknown = failed.code === "NOT_FOUND" && !config.known;  // neither the matchmaker nor the engine has it
    if (unknown) status.textContent = "no match with this id is being played";
    else if (failed.code === "NOT_FOUND") status.textContent = "no live feed for this match: matches of built-in bots only are played inside a worker";
    else status.textContent = failed.error;
    document.getElementById("later").hidden = unknown || failed.final === true;  // final: over, with no replay
    document.getElementById("board").hidden = events === 0;  // no empty table of bids "–" and totals 0
  });
  if (names.length) build(names.length);
  if (config.feed === false) status.textContent = "waiting for the match to end";  // #no-feed says why
})();
