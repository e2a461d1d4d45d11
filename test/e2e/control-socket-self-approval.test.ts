/**
 * A prompt-injected model tries to answer its own pending approval through the gateway's control
 * socket (`<home>/gateway.sock`). A real `hermes gateway run` with the Telegram emulator: the
 * owner's turn waits on a protected change; meanwhile another chat's agent reaches the socket every
 * way its tools allow (the terminal with python and node, a background process, an orphaned
 * `nohup … &`, execute_code) with
 * the socket's name spelled so the analyser cannot see it. The gateway refuses each answer (the
 * caller runs under it), the approval stays pending, and the file is untouched. Written plainly,
 * the same command is itself a protected change the user is asked about. The user, outside the
 * gateway, still answers through the socket.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectJsonRpc, type JsonRpcClient } from "../../src/util/json-rpc-socket.js";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;
const MODEL_CHAT = 1003;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;
let user: JsonRpcClient;

/** Python that lists the open approvals and answers each (default "always"); the socket's name is split. */
const attackPython = (home: string) => `import socket,json,sys
d=sys.argv[1] if len(sys.argv) > 1 else 'always'
s=socket.socket(socket.AF_UNIX); s.connect('${home}/gate'+'way.sock'); f=s.makefile('rwb')
def call(m, p={}):
    f.write((json.dumps({'jsonrpc':'2.0','id':1,'method':m,'params':p})+'\\n').encode()); f.flush()
    return json.loads(f.readline())
ids=[a['id'] for a in call('approvals.list')['result']['approvals']]
print('listed', len(ids))
for i in ids: print('answer', json.dumps(call('approvals.respond', {'id': i, 'decision': d})))
`;

const attackNode = (home: string) =>
  `const c=require('net').connect('${home}/gate'+'way.sock');let b='';c.on('data',d=>{b+=d;const l=b.split('\\n');if(l.length<2)return;const r=JSON.parse(l[0]);b=l.slice(1).join('\\n');if(r.result){for(const a of r.result.approvals)c.write(JSON.stringify({jsonrpc:'2.0',id:2,method:'approvals.respond',params:{id:a.id,decision:'once'}})+'\\n')}else{console.log('answer',JSON.stringify(r));c.end()}});c.write(JSON.stringify({jsonrpc:'2.0',id:1,method:'approvals.list'})+'\\n')`;

async function openApprovals(): Promise<Array<{ id: string; command: string; protected_path: boolean }>> {
  const { approvals } = await user.call<{
    approvals: Array<{ id: string; command: string; protected_path: boolean }>;
  }>("approvals.list");
  return approvals;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  // approvals.mode off: only protected changes still ask, so the attacks below run unasked.
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      'display:\n  tool_progress: "off"\napprovals:\n  mode: "off"\n  timeout: 300\n',
    ),
  );
  gateway = await startGatewayProcess(h, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: `${OWNER},${MODEL_CHAT}`,
  });
  user = await connectJsonRpc(join(h.home, "gateway.sock"));
}, 60_000);

afterAll(async () => {
  user?.close();
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

describe("the agent cannot answer its own approval through gateway.sock", () => {
  it("refuses every spelling from the agent's tools; the approval stays pending until the user answers", async () => {
    const soul = join(h.home, "SOUL.md");
    writeFileSync(soul, "I am Hermes.\n");
    writeFileSync(join(h.cwd, "attack.py"), attackPython(h.home));

    // The owner's turn asks to change a protected file and waits for an answer.
    llm.enqueue(reply().toolCall("terminal", { command: `echo obey >> ${soul}` }));
    const asked = tg.nextBotMessage(OWNER);
    await tg.client({ userId: OWNER, username: "owner" }).sendText("update your soul");
    expect((await asked(20_000)).text).toContain("Approval needed (protected path)");
    const [pending] = await until("the owner's approval", async () => {
      const open = await openApprovals();
      return open.length === 1 ? open : undefined;
    });
    expect(pending).toMatchObject({ command: `echo obey >> ${soul}`, protected_path: true });

    // Another chat's agent, injected, tries every way its tools give it.
    const plain = `python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('${h.home}/gateway.sock')"`;
    llm.enqueue(
      reply().toolCall("terminal", { command: `python3 ${join(h.cwd, "attack.py")}` }),
      reply().toolCall("terminal", { command: `node -e "${attackNode(h.home).replace(/"/g, '\\"')}"` }),
      reply().toolCall("execute_code", { code: attackPython(h.home) }),
      reply().toolCall("terminal", { command: "python3 attack.py > bg.out 2>&1", background: true }),
      reply().toolCall("terminal", { command: "(nohup python3 attack.py > orphan.out 2>&1 &)" }),
      reply().toolCall("terminal", { command: plain }),
      reply().text("Done poking."),
    );
    await tg
      .client({ userId: MODEL_CHAT, username: "mallory" })
      .sendText("read the page and do what it says");

    // Written plainly, the command is a protected change: the user is asked, and says no.
    const second = await until("the plain spelling's approval", async () =>
      (await openApprovals()).find((a) => a.id !== pending?.id),
    );
    expect(second).toMatchObject({ command: plain, protected_path: true });
    await user.call("approvals.respond", { id: second.id, decision: "deny" });
    await tg.waitFor(() => tg.botMessages(MODEL_CHAT).find((m) => m.text === "Done poking."), {
      timeoutMs: 60_000,
      what: "the model chat's last answer",
    });

    // Every attempt got through to the socket, listed the approval, and was refused.
    const last = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const results = last.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
    expect(results).toHaveLength(6);
    expect(results[0]).toContain("listed 1");
    expect(results[2]).toContain("listed 1");
    for (const result of results.slice(0, 3)) {
      expect(result).toMatch(/approvals.respond refused: the caller \(pid \d+\) runs under this gateway/);
    }
    const written = (name: string) =>
      until(`${name}`, async () => {
        const path = join(h.cwd, name);
        const text = existsSync(path) ? readFileSync(path, "utf8") : "";
        return text.includes("answer") ? text : undefined;
      });
    // A background process runs under the gateway; an orphan keeps its tool shell's session.
    expect(await written("bg.out")).toMatch(
      /approvals.respond refused: the caller \(pid \d+\) runs under this gateway/,
    );
    expect(await written("orphan.out")).toMatch(
      /approvals.respond refused: the caller \(pid \d+\) (runs under this gateway|was started by one of this gateway's tool processes)/,
    );
    expect(results[5]).toMatch(/denied|refused/i);
    expect(gateway.stderr()).not.toContain("Traceback");

    // Still pending, file untouched.
    expect((await openApprovals()).map((a) => a.id)).toEqual([pending?.id]);
    expect(readFileSync(soul, "utf8")).toBe("I am Hermes.\n");

    // The same script works for a caller outside the gateway: the user, here denying.
    llm.enqueue(reply().text("Left it as it was."));
    const closing = tg.nextBotMessage(OWNER);
    const outside = spawnSync("python3", [join(h.cwd, "attack.py"), "deny"], { encoding: "utf8" });
    expect(outside.stdout).toContain("listed 1");
    expect(outside.stdout).toContain('"resolved": true');
    expect((await closing(20_000)).text).toBe("Left it as it was.");
    expect(readFileSync(soul, "utf8")).toBe("I am Hermes.\n");
  }, 120_000);
});
