// An Oh Hell agent in Node.js, from the .proto files only (no generated code).
// Usage: node bot.js HOST:PORT TOKEN [MATCHES]   -- plays MATCHES matches (default: forever).
// Bids its aces and kings; plays its lowest legal card.
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOS = process.env.OHELL_PROTOS || path.join(__dirname, "..", "..", "protos");
const definition = protoLoader.loadSync("ohell/v1/gateway.proto", {
  includeDirs: [PROTOS], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
});
const ohell = grpc.loadPackageDefinition(definition).ohell.v1;
const RANKS = ["RANK_TWO", "RANK_THREE", "RANK_FOUR", "RANK_FIVE", "RANK_SIX", "RANK_SEVEN", "RANK_EIGHT",
  "RANK_NINE", "RANK_TEN", "RANK_JACK", "RANK_QUEEN", "RANK_KING", "RANK_ACE"];
const rank = (card) => RANKS.indexOf(card.rank);

function decide(request) {
  const action = { match_id: request.match_id, seat: request.seat, decision_id: request.decision_id };
  if (request.kind === "DECISION_KIND_BID") {
    const wanted = request.observation.hand.filter((card) => rank(card) >= 11).length;
    const distance = (tricks) => Math.abs(tricks - wanted);
    action.bid = request.legal_bids.reduce((best, b) => (distance(b) < distance(best) ? b : best));
  } else {
    action.card = request.legal_cards.reduce((low, c) => (rank(c) < rank(low) ? c : low));
  }
  return action;
}

function main() {
  const [address, token, matches] = process.argv.slice(2);
  if (!address || !token) {
    console.error("usage: node bot.js HOST:PORT TOKEN [MATCHES]");
    process.exit(2);
  }
  const client = new ohell.AgentGatewayService(address, grpc.credentials.createInsecure(), {
    "grpc.keepalive_time_ms": 20000, "grpc.keepalive_timeout_ms": 10000,
  });
  const metadata = new grpc.Metadata();
  metadata.add("authorization", `Bearer ${token}`);
  const stream = client.Connect(metadata);
  let ended = 0;
  stream.on("metadata", () => console.log("connected"));
  stream.on("data", (response) => {
    const event = response.event;
    if (event.event === "decision") {
      stream.write({ action: decide(event.decision) });
    } else if (event.event === "match_ended") {
      ended += 1;
      console.log(`match ${event.match_ended.match_id} ended: totals ${event.match_ended.totals.join(" ")}`);
      if (matches && ended >= Number(matches)) {
        stream.end();
        client.close();
        process.exit(0);
      }
    } else if (event.event === "notice") {
      console.error(`notice ${event.notice.code}: ${event.notice.message}`);
    }
  });
  stream.on("error", (error) => {
    console.error(`stream ended: ${error.code} ${error.details}`);
    process.exit(1);
  });
}

main();
