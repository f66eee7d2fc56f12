// The official TypeScript SDK's client uses every memd tool as an agent
// would and prints what it saw as JSON, for TestMCP_TypeScriptSDKClient to
// compare across transports. The SDK checks each answer's structured
// content against the tool's output schema itself (with ajv).
//
//   node check.mjs stdio MEMD_BIN   (memd mcp; MEMD_ADDR and MEMD_TOKEN in the environment)
//   node check.mjs http URL TOKEN   (streamable HTTP at URL)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [kind, target, token] = process.argv.slice(2);
const transport =
  kind === "stdio"
    ? new StdioClientTransport({ command: target, args: ["mcp"], env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });

const client = new Client({ name: "memd-test", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const seen = { tools: tools.map(summary), calls: [] };

// call records one tool call; a refused call is recorded, not thrown.
async function call(name, args) {
  let res;
  try {
    res = await client.callTool({ name, arguments: args });
  } catch (err) {
    // The SDK throws when structured content breaks the output schema.
    res = { isError: true, thrown: String(err.message ?? err) };
  }
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  seen.calls.push({ name, args, isError: !!res.isError, thrown: res.thrown, text, structured: res.structuredContent ?? null });
  return res.structuredContent ?? {};
}

function summary(t) {
  const props = t.inputSchema.properties ?? {};
  return {
    name: t.name,
    annotations: t.annotations ?? null,
    enums: Object.fromEntries(Object.entries(props).filter(([, p]) => p.enum).map(([k, p]) => [k, p.enum])),
    outputType: t.outputSchema?.type ?? null,
  };
}

const remembered = await call("remember", {
  text: "Pat moved to Lisbon in October",
  source_messages: ["msg_1"],
  source_chat: "chat_1",
  source_excerpt: "Pat: we moved to Lisbon!",
});
const id = remembered.fact?.id;
await call("recall", { query: "where does Pat live?" });
await call("memory_context", {});
await call("trace", { id });
await call("history", { message: "msg_1" });
await call("create_note", { path: "deploy.md", text: "# Deploy\n\n1. Build.\n2. Ship.\n" });
const note = await call("read_note", { path: "deploy.md" });
await call("edit_note", {
  path: "deploy.md",
  expectedRevision: note.revision,
  edits: [{ op: "insert_after", anchor: "1. Build.\n", text: "1b. Test.\n" }],
});
await call("list_notes", {});
const tea = await call("remember", { text: "Pat drinks tea" });
await call("edit_fact", { id: tea.fact?.id, text: "Pat drinks green tea", source_messages: ["msg_2"] });
await call("list_shards", { chat_kind: "direct", user: "pat" });
await call("forget", { id, source_messages: ["msg_3"] });
const again = await call("read_note", { path: "deploy.md" });
await call("delete_note", { path: "deploy.md", expected_revision: again.revision });
// Values outside a closed set or a range are refused.
await call("history", { op: "bogus" });
await call("recall", { query: "tea", k: 0 });
await call("remember", { text: "x", tier: "forever" });

await client.close();
process.stdout.write(JSON.stringify(seen, null, 1) + "\n");
