// An Oh Hell agent in Node.js, from the .proto files only (no generated code). It enters a ladder
// and plays every table it is seated at; it bids its aces and kings and plays its lowest legal card.
// Usage: OHELL_AGENT_TOKEN=TOKEN node bot.js ENGINE_ADDRESS MATCHMAKER_ADDRESS LADDER [MATCHES]
//   MATCHES: exit after that many matches (default: play for ever). See docs/protocol.md.
//   Without $OHELL_AGENT_TOKEN the token is the third argument, where ps shows it to every user.
//   The .proto files are read from $OHELL_PROTOS (the folder holding ohell/v1/), else from the
//   repository's protos/ two folders up from this file: set OHELL_PROTOS when bot.js is elsewhere.
"use strict";
const fs = require("fs");
const path = require("path");

// What is printed carries the server's text (notices, match ids, a refusal's details): its control
// characters are dropped (C0 but tab and newline, DEL, C1), so no escape sequence reaches the terminal.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const shown = (text) => String(text).replace(CONTROL, "");
const grpc = installed("@grpc/grpc-js");
const protoLoader = installed("@grpc/proto-loader");

const PROTOS_ENV = "OHELL_PROTOS";
const PROTO_FILES = ["ohell/v1/gateway.proto", "ohell/v1/matchmaker.proto"];

// A package of package.json, or one line saying to install it (not a stack trace).
function installed(name) {
  try {
    return require(name);
  } catch (error) {
    if (error.code === "MODULE_NOT_FOUND" && error.message.includes(`'${name}'`)) {
      // a bot.js copied out of examples/node has no package.json beside it: name both packages
      fail(`the package ${name} is not installed: run npm install @grpc/grpc-js @grpc/proto-loader in ${__dirname}`);
    }
    throw error;
  }
}

// The ohell.v1 services from the .proto files, or one line saying where they were looked for.
function loadServices() {
  const given = process.env[PROTOS_ENV];
  const folder = path.resolve(given || path.join(__dirname, "..", "..", "protos"));
  const whence = given ? `$${PROTOS_ENV}` : `the default, as no $${PROTOS_ENV} is set`;
  const missing = PROTO_FILES.filter((file) => !fs.existsSync(path.join(folder, file)));
  if (missing.length) {
    fail(`cannot find ${missing.join(" and ")} in ${folder} (${whence}): set ${PROTOS_ENV} to the folder ` +
      "that holds ohell/v1/*.proto, the protos/ of an ohell-arena checkout " +
      "(OHELL_PROTOS=/path/to/ohell-arena/protos)");
  }
  try {
    const definition = protoLoader.loadSync(PROTO_FILES, {
      includeDirs: [folder], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
    });
    return grpc.loadPackageDefinition(definition).ohell.v1;
  } catch (error) {
    return fail(`cannot read the .proto files in ${folder} (${whence}): ${error.message}`);
  }
}

const RANKS = ["RANK_TWO", "RANK_THREE", "RANK_FOUR", "RANK_FIVE", "RANK_SIX", "RANK_SEVEN", "RANK_EIGHT",
  "RANK_NINE", "RANK_TEN", "RANK_JACK", "RANK_QUEEN", "RANK_KING", "RANK_ACE"];
const rank = (card) => RANKS.indexOf(card.rank);
const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).map(([name, code]) => [code, name]));
const CONNECT_TIMEOUT_MS = 10000; // how long an address may fail to answer before we give up
const OPTIONS = { "grpc.keepalive_time_ms": 20000, "grpc.keepalive_timeout_ms": 10000 };

// The bot: replace these two functions with your own.
function bid(request) {
  const wanted = request.observation.hand.filter((card) => rank(card) >= 11).length;
  const distance = (tricks) => Math.abs(tricks - wanted);
  return request.legal_bids.reduce((best, b) => (distance(b) < distance(best) ? b : best));
}

function play(request) {
  return request.legal_cards.reduce((low, c) => (rank(c) < rank(low) ? c : low));
}

// An exception in the bot is logged and answered with the default action (lowest legal bid or card),
// flagged bot_error: the platform records a BOT_ERROR fault and the match goes on. A decision that
// offers nothing to choose from (only a broken or hostile server sends one) is logged and left
// unanswered (undefined), as the Python SDK does: there is no default to answer it with.
function decide(request) {
  const action = { match_id: request.match_id, seat: request.seat, decision_id: request.decision_id };
  const bidding = request.kind !== "DECISION_KIND_PLAY";
  const field = bidding ? "legal_bids" : "legal_cards";
  if (!Array.isArray(request[field]) || request[field].length === 0) {
    log(`decision ${request.decision_id} of match ${request.match_id} offers no ${field}: left unanswered`);
    return undefined;
  }
  try {
    if (bidding) action.bid = bid(request);
    else action.card = play(request);
  } catch (error) {
    log(`the bot failed on decision ${request.decision_id} of match ${request.match_id}: ${error.stack}`);
    action.bot_error = true;
    if (bidding) action.bid = Math.min(...request.legal_bids);
    else action.card = request.legal_cards[0]; // the platform lists legal cards lowest first
  }
  return action;
}

const log = (text) => console.log(`${new Date().toISOString().slice(11, 19)} ${shown(text)}`);

function fail(text) {
  console.error(`error: ${shown(text)}`);
  process.exit(2);
}

// Why a call ended, in one line; fatal problems end the program, others are retried with back-off.
function explain(error, what, address, acceptedBefore) {
  const code = CODE_NAMES[error.code] || `code ${error.code}`;
  if (code === "UNAUTHENTICATED") {
    fail(acceptedBefore
      ? `the ${what} at ${address} no longer accepts your token (it was revoked?): ${error.details}`
      : `the ${what} at ${address} refused your token (${error.details}): use the token the host gave you`);
  }
  if (code === "PERMISSION_DENIED") fail(`the ${what} at ${address} refused: ${error.details}`);
  if (code === "NOT_FOUND" || code === "INVALID_ARGUMENT") fail(`the ${what} at ${address}: ${error.details}`);
  if (code === "ABORTED" && what === "gateway") {
    fail(`another process connected to the gateway at ${address} with your token and replaced this one`);
  }
  return `${code}: ${error.details}`;
}

// Keep one call open: open() starts it and returns the call; on its end, retry with back-off.
function keepOpen(what, address, open, onUp) {
  const started = Date.now();
  let accepted = false;
  let delay = 50;
  const attempt = () => {
    let up = false;
    const call = open();
    call.on("metadata", () => {
      up = accepted = true;
      delay = 50;
      onUp(call);
    });
    call.on("error", (error) => {
      const why = explain(error, what, address, accepted);
      if (!accepted && Date.now() - started > CONNECT_TIMEOUT_MS) {
        fail(`cannot reach the ${what} at ${address} after ${CONNECT_TIMEOUT_MS / 1000} s (${why}): ` +
          "is the address right and the service up?");
      }
      if (up) log(`lost the ${what} at ${address} (${why}); reconnecting`);
      setTimeout(attempt, delay);
      delay = Math.min(delay * 2, 5000);
    });
    call.on("status", (status) => { // a stream the server ended cleanly is opened again
      if (status.code === grpc.status.OK) setTimeout(attempt, delay);
    });
  };
  attempt();
}

// ENGINE MATCHMAKER LADDER [MATCHES] with $OHELL_AGENT_TOKEN, else ENGINE MATCHMAKER TOKEN LADDER [MATCHES];
// undefined for any other form. MATCHES must be a whole number: with the env token, a call in the token
// form (its LADDER fourth) is refused like examples/python_bot.py does, rather than taking TOKEN for LADDER.
function parseArgs(args, fromEnv) {
  if (fromEnv && args[2] === fromEnv) return undefined;
  const given = fromEnv ? [...args.slice(0, 2), fromEnv, ...args.slice(2)] : args;
  const [engine, matchmaker, token, ladder, matches] = given;
  const counted = given.length === 4 || (given.length === 5 && /^[1-9][0-9]*$/.test(matches));
  return counted && engine && matchmaker && token && ladder ? { engine, matchmaker, token, ladder, matches } : undefined;
}

function main() {
  const parsed = parseArgs(process.argv.slice(2), process.env.OHELL_AGENT_TOKEN);
  if (!parsed) {
    console.error("usage: OHELL_AGENT_TOKEN=TOKEN node bot.js ENGINE_ADDRESS MATCHMAKER_ADDRESS LADDER [MATCHES]");
    console.error("   or: node bot.js ENGINE_ADDRESS MATCHMAKER_ADDRESS TOKEN LADDER [MATCHES] (ps shows the token)");
    process.exit(2);
  }
  const { engine, matchmaker, token, ladder, matches } = parsed;
  if (token.includes(",")) { // no token has a comma: a row of the host's tokens file
    const given = process.env.OHELL_AGENT_TOKEN ? "$OHELL_AGENT_TOKEN" : "the token argument";
    fail(`${given} is a row of the host's tokens file (name,agent_id,token): give the token alone, the row's last field`);
  }
  const ohell = loadServices();
  const metadata = new grpc.Metadata();
  metadata.add("authorization", `Bearer ${token}`);
  const gateway = new ohell.AgentGatewayService(engine, grpc.credentials.createInsecure(), OPTIONS);
  const queue = new ohell.MatchmakerService(matchmaker, grpc.credentials.createInsecure(), OPTIONS);
  let ended = 0;
  let queued = false;
  keepOpen("gateway", engine, () => gateway.Connect(metadata), (stream) => {
    log(`connected to the gateway at ${engine}`);
    stream.on("data", ({ event }) => {
      if (event.event === "decision") {
        const action = decide(event.decision);
        if (action) stream.write({ action });
      } else if (event.event === "match_started") {
        log(`match ${event.match_started.match_id} started: you sit in seat ${event.match_started.seat}`);
      } else if (event.event === "match_ended") {
        ended += 1;
        const result = event.match_ended;
        log(`match ${result.match_id} ended: totals ${result.totals.join(" ")}, ${result.faults.length} fault(s)`);
        if (matches && ended >= Number(matches)) process.exit(0);
      } else if (event.event === "notice") {
        log(`notice ${event.notice.code}: ${event.notice.message}`);
      }
    });
    if (queued) return; // the ticket stream is already kept open
    queued = true; // a connected agent's ticket needs its gateway stream: queue once it is up
    keepOpen("matchmaker", matchmaker, () => queue.WatchQueue({ ladder }, metadata), (watch) => {
      log(`queued on ladder ${ladder} at the matchmaker ${matchmaker}`);
      watch.on("data", (seating) => log(`seated at match ${seating.match_id}, seat ${seating.seat}`));
    });
  });
}

main();
