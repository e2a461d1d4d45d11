import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export function tempDir(prefix = "hermes-hub-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A SKILL.md with frontmatter. */
export function skillMd(
  name: string,
  description = `The ${name} skill.`,
  extra = "",
  body = "# Title\n\nDo the thing.\n",
): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;
}

/** Writes `files` (relative path → content) under `dir`. */
export function writeTree(dir: string, files: Record<string, string | Buffer>): string {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return dir;
}

export function bundleFiles(files: Record<string, string | Buffer>): Map<string, Buffer> {
  return new Map(Object.entries(files).map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v)]));
}

export interface TestServer {
  url: string;
  /** Path → body (string, Buffer) or a handler; change it between requests to simulate updates. */
  routes: Map<string, string | Buffer | ((req: IncomingMessage, res: ServerResponse) => void)>;
  requests: string[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 serving `routes`; anything else is a 404. */
export async function startServer(): Promise<TestServer> {
  const routes: TestServer["routes"] = new Map();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0] ?? "/");
    requests.push(path);
    const route = routes.get(path);
    if (typeof route === "function") {
      route(req, res);
      return;
    }
    if (route === undefined) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    res.writeHead(200, { "content-type": path.endsWith(".json") ? "application/json" : "text/plain" });
    res.end(route);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: GIT_ENV,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * A bare repository holding `files` in one commit on `main`, plus its working clone for later
 * commits. Returns the `file://` URL of the bare repository.
 */
export function gitRepo(files: Record<string, string>): { url: string; work: string; bare: string } {
  const root = tempDir("hermes-hub-git-");
  const work = join(root, "work");
  const bare = join(root, "repo.git");
  mkdirSync(work);
  git(work, "init", "-q", "-b", "main");
  writeTree(work, files);
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "initial");
  git(root, "clone", "-q", "--bare", work, bare);
  git(work, "remote", "add", "origin", bare);
  return { url: `file://${bare}`, work, bare };
}

/** Commits `files` in the working clone and pushes to the bare repository. */
export function gitCommit(repo: { work: string }, files: Record<string, string>, message = "update"): void {
  writeTree(repo.work, files);
  git(repo.work, "add", "-A");
  git(repo.work, "commit", "-q", "-m", message);
  git(repo.work, "push", "-q", "origin", "main");
}
