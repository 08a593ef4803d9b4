// Drives `pith --mode acp` with the official ACP TypeScript SDK's client and prints a JSON
// report as its last line (tests/all/acp_client.rs asserts on it).
//
// Environment: PITH_BIN (the binary), PITH_WORK (its working directory), PITH_FAUX_FIRST and
// PITH_FAUX_SECOND (the faux provider's scripts for the first and the second process),
// PITH_OUTSIDE (a directory outside the workspace the sandbox asks about), PITH_AGENT_DIR.
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const report = {};
const work = process.env.PITH_WORK;

/// Starts pith with a faux script; returns the client's connection and what it saw.
function start(script) {
  const child = spawn(process.env.PITH_BIN, [
    "--mode", "acp", "--provider", "faux", "--model", "faux-model", "--session-dir", "sessions",
  ], {
    cwd: work,
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, PITH_FAUX_SCRIPT: script },
  });
  const seen = { updates: [], permissions: [] };
  // How the next permission request is answered: "allow", "reject" or "cancel".
  seen.answer = "allow";
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = acp.client({ name: "pith-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      if (seen.answer === "cancel") return { outcome: { outcome: "cancelled" } };
      const kind = seen.answer === "allow" ? "allow_once" : "reject_once";
      const option = params.options.find((o) => o.kind === kind);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  const connection = app.connect(stream);
  return { child, seen, agent: connection.agent, connection };
}

const initialize = (agent) => agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "pith-acp-test", version: "0" },
});

/// The updates seen since `from`, by kind.
const since = (seen, from, kind) => seen.updates.slice(from).filter((u) => u.sessionUpdate === kind);
const text = (updates) => updates.map((u) => u.content.text).join("");
const failure = async (promise) => {
  try {
    await promise;
    return { ok: true };
  } catch (error) {
    return { sdkError: error instanceof acp.RequestError, code: error.code, message: error.message };
  }
};
const stop = async ({ child, connection }) => {
  connection.close?.();
  child.stdin.end();
  return await new Promise((resolve) => child.on("exit", (code) => resolve(code)));
};

// The first process: a session, its prompts, dialogs and errors.
{
  const first = start(process.env.PITH_FAUX_FIRST);
  const { agent, seen } = first;
  const init = await initialize(agent);
  report.init = {
    protocolVersion: init.protocolVersion,
    loadSession: init.agentCapabilities.loadSession,
    list: init.agentCapabilities.sessionCapabilities?.list !== undefined,
    image: init.agentCapabilities.promptCapabilities.image,
    authMethods: init.authMethods,
    name: init.agentInfo.name,
  };
  const created = await agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
  const sessionId = created.sessionId;
  report.sessionId = sessionId;
  report.configOptions = created.configOptions.map((o) => ({ id: o.id, category: o.category, currentValue: o.currentValue }));
  const prompt = (text) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

  let from = seen.updates.length;
  report.hello = (await prompt("hello")).stopReason;
  report.helloThought = text(since(seen, from, "agent_thought_chunk"));
  report.helloText = text(since(seen, from, "agent_message_chunk"));
  report.helloUsage = since(seen, from, "usage_update").map((u) => ({ size: u.size, currency: u.cost?.currency }));
  report.commands = since(seen, 0, "available_commands_update").flatMap((u) => u.availableCommands.map((c) => c.name));

  from = seen.updates.length;
  report.edit = (await prompt("edit the notes")).stopReason;
  const editCalls = since(seen, from, "tool_call");
  const editUpdates = since(seen, from, "tool_call_update");
  report.editCall = editCalls.map((c) => ({ id: c.toolCallId, kind: c.kind, title: c.title, status: c.status, content: c.content, locations: c.locations }));
  report.editStatuses = editUpdates.map((u) => u.status).filter(Boolean);
  report.editFinal = editUpdates[editUpdates.length - 1];

  for (const answer of ["allow", "reject"]) {
    seen.answer = answer;
    from = seen.updates.length;
    const asked = seen.permissions.length;
    const reason = (await prompt(`write outside (${answer})`)).stopReason;
    const permission = seen.permissions[asked];
    const updates = since(seen, from, "tool_call_update");
    report[answer] = {
      reason,
      toolCallId: permission?.toolCall.toolCallId,
      kinds: permission?.options.map((o) => o.kind),
      title: permission?.toolCall.title,
      final: updates[updates.length - 1]?.status,
    };
  }

  from = seen.updates.length;
  const slow = prompt("a slow answer");
  await new Promise((resolve) => {
    const poll = setInterval(() => {
      if (since(seen, from, "agent_message_chunk").length > 0) { clearInterval(poll); resolve(); }
    }, 5);
  });
  await agent.notify(acp.methods.agent.session.cancel, { sessionId });
  report.cancel = (await slow).stopReason;
  report.cancelChunks = since(seen, from, "agent_message_chunk").length;

  // A session in another folder than pith's, with a stdio MCP server (one that exits at once:
  // the session starts anyway); its prompt runs there.
  const elsewhere = (await agent.request(acp.methods.agent.session.new, {
    cwd: process.env.PITH_OUTSIDE, mcpServers: [{ name: "x", command: "/bin/true", args: [], env: [] }],
  })).sessionId;
  report.mcpSession = typeof elsewhere;
  report.elsewhere = (await agent.request(acp.methods.agent.session.prompt, {
    sessionId: elsewhere, prompt: [{ type: "text", text: "hello there" }],
  })).stopReason;
  report.unknownSession = await failure(agent.request(acp.methods.agent.session.prompt, {
    sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }],
  }));
  report.badConfig = await failure(agent.request(acp.methods.agent.session.setConfigOption, {
    sessionId, configId: "thinking", value: "enormous",
  }));
  report.firstExit = await stop(first);
}

// The second process: the saved session is listed, loaded (replayed) and continued.
{
  const second = start(process.env.PITH_FAUX_SECOND);
  const { agent, seen } = second;
  await initialize(agent);
  const listed = await agent.request(acp.methods.agent.session.list, { cwd: work });
  report.listed = listed.sessions.map((s) => ({ sessionId: s.sessionId, title: s.title, hasTime: typeof s.updatedAt === "string" }));
  const sessionId = report.sessionId;
  const loaded = await agent.request(acp.methods.agent.session.load, { sessionId, cwd: work, mcpServers: [] });
  report.loadedOptions = loaded.configOptions.length;
  report.replay = seen.updates.map((u) => u.sessionUpdate);
  report.replayUser = text(seen.updates.filter((u) => u.sessionUpdate === "user_message_chunk")).slice(0, 5);
  report.replayCalls = seen.updates.filter((u) => u.sessionUpdate === "tool_call").map((c) => ({ kind: c.kind, status: c.status }));
  const from = seen.updates.length;
  report.afterLoad = (await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "and now?" }] })).stopReason;
  report.afterLoadText = text(since(seen, from, "agent_message_chunk"));
  report.missing = await failure(agent.request(acp.methods.agent.session.load, { sessionId: "nope", cwd: work, mcpServers: [] }));
  report.secondExit = await stop(second);
}

console.log(JSON.stringify(report));
