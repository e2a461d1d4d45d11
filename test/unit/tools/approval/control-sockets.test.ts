/**
 * Commands and code that reach the home's control socket (`gateway.sock`, which answers approvals)
 * are protected changes: the spellings a prompt-injected model would try all need the user's own
 * answer, and the approval policy asks even in yolo mode.
 */
import { describe, expect, it } from "vitest";
import { ApprovalPolicy } from "../../../../src/agent/approval-policy.js";
import { analyseCommand } from "../../../../src/tools/approval/index.js";
import { analyseScript } from "../../../../src/tools/approval/interpreters.js";
import { CTX } from "./interp-helpers.js";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const PY_CONNECT =
  "import socket,json;s=socket.socket(socket.AF_UNIX);s.connect('/home/u/.hermes/gateway.sock');s.sendall(b'{}')";

describe("commands that reach the control socket", () => {
  it.each([
    "nc -U ~/.hermes/gateway.sock",
    'nc -U /home/u/.hermes/gateway.sock <<< \'{"jsonrpc":"2.0","id":1,"method":"approvals.list"}\'',
    'echo \'{"jsonrpc":"2.0","id":1,"method":"approvals.list"}\' | ncat -U "$HERMES_HOME/gateway.sock"',
    "socat - UNIX-CONNECT:/home/u/.hermes/gateway.sock",
    "socat - UNIX-CLIENT:$HOME/.hermes/gateway.sock",
    "curl --unix-socket ~/.hermes/gateway.sock http://localhost/",
    `python3 -c "${PY_CONNECT}"`,
    "node -e \"require('net').connect('/home/u/.hermes/gateway.sock').write('{}\\n')\"",
    "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"/home/u/.hermes/gateway.sock\")'",
    // Spelled so the name is not written out.
    'nc -U ~/.hermes/gate""way.sock',
    "nc -U ~/.hermes/gate'way'.sock",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, not a template
    "S=gate; nc -U ~/.hermes/${S}way.sock",
    "nc -U ~/.hermes/g*",
    "nc -U ~/.hermes/*.sock",
    "nc -U /home/u/.hermes/gatewa?.soc[k]",
    "nc -U $HERMES_HOME/[g]ateway*",
    "cd ~/.hermes && nc -U g*",
    "cd /home/u/.hermes; socat - UNIX-CONNECT:gate*",
    `echo ${b64("nc -U /home/u/.hermes/gateway.sock")} | base64 -d | sh`,
    "bash -c 'nc -U ~/.hermes/gateway.sock'",
    "sudo -u u nc -U /home/u/.hermes/gateway.sock",
    "hermes gateway status; nc -U /home/u/.hermes/profiles/work/gateway.sock",
  ])("%s needs the user's own answer", (command) => {
    const verdict = analyseCommand(command, CTX);
    expect(verdict.dangerous).toBe(true);
    expect(verdict.protectedPath).toBe(true);
    expect(verdict.findings.map((f) => f.key)).toContain("control_socket");
  });

  it.each([
    "ls ~/.hermes",
    "nc -U /tmp/other.sock",
    "cat ~/.hermes/config.yaml",
    "cd ~/.hermes && ls *.md",
    "echo hermes gateway",
  ])("%s is not about the control socket", (command) => {
    expect(analyseCommand(command, CTX).findings.map((f) => f.key)).not.toContain("control_socket");
  });

  it("flags execute_code and interpreter code that names the socket", () => {
    const shell = () => [];
    for (const [language, source] of [
      ["python", PY_CONNECT],
      [
        "python",
        "import os,socket\ns=socket.socket(socket.AF_UNIX)\ns.connect(os.path.expanduser('~/.hermes/gateway.sock'))",
      ],
      ["node", "const net = require('net'); net.connect(process.env.HERMES_HOME + '/gateway.sock');"],
    ] as const) {
      const findings = analyseScript(language, source, CTX, shell);
      expect(findings).toContainEqual(
        expect.objectContaining({ key: "control_socket", protectedPath: true }),
      );
    }
  });

  it("the approval policy asks the user even in yolo mode, and a session approval never carries", async () => {
    const asked: string[] = [];
    const policy = new ApprovalPolicy({
      yolo: true,
      settings: { mode: "off" },
      allowlist: ["control_socket"],
      prompt: async (request) => {
        asked.push(request.command);
        return "deny";
      },
    });
    const command = "nc -U ~/.hermes/gateway.sock";
    const verdict = analyseCommand(command, CTX);
    const outcome = await policy.decide({
      command,
      reason: verdict.reason ?? "",
      patternKey: verdict.patternKey ?? "",
      protectedPath: verdict.protectedPath,
    });
    expect(asked).toEqual([command]);
    expect(outcome.decision).toBe("deny");
  });
});
