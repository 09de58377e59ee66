// Shared by the replay and the live view: drawing cards and the score table.
"use strict";
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
// A record's card ("TH") as the pages show it ("10♥"): on the table and in captions alike
// (services/web/replay.py: card_face).
function cardFace(text) {
  return text.slice(0, -1).replace("T", "10") + SUITS[text.slice(-1)];
}
function cardEl(text) {
  const span = document.createElement("span");
  const suit = text.slice(-1);
  span.className = "c" + (suit === "H" || suit === "D" ? " red" : "");
  span.textContent = cardFace(text);
  span.dataset.card = text;
  return span;
}
function fill(el, cards) {
  el.replaceChildren(...cards.map(cardEl));
}
function scoreRow(label, cells) {
  const tr = document.createElement("tr");
  const th = document.createElement("td");
  th.textContent = label;
  tr.appendChild(th);
  for (const text of cells) {
    const td = document.createElement("td");
    td.className = "num";
    td.textContent = text;
    tr.appendChild(td);
  }
  return tr;
}
