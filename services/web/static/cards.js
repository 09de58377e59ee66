// Shared by the replay and the live view: drawing cards and the score table.
"use strict";
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
function cardEl(text) {
  const span = document.createElement("span");
  const suit = text.slice(-1), rank = text.slice(0, -1).replace("T", "10");
  span.className = "c" + (suit === "H" || suit === "D" ? " red" : "");
  span.textContent = rank + SUITS[suit];
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
