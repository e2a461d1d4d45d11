/** Test helpers: skill trees on disk and a realistic collection of a hundred skills. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { SkillMeta } from "../../../../src/knowledge/skills/types.js";

export function tempHome(prefix = "hermes-skills-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** A minimal valid SKILL.md (the description is quoted when YAML needs it). */
export function skillMd(
  name: string,
  description: string,
  extra = "",
  body = "# Title\n\nDo the thing.\n",
): string {
  const desc = /: |^[[{&*!|>'"%@`#-]/.test(description) ? JSON.stringify(description) : description;
  return `---\nname: ${name}\ndescription: ${desc}\n${extra}---\n\n${body}`;
}

/** Writes `<root>/<category>/<name>/SKILL.md` (no category folder when category is ""). */
export function writeSkill(
  root: string,
  category: string,
  name: string,
  description = `Does ${name} things.`,
  extra = "",
  body?: string,
): string {
  const dir = category ? join(root, category, name) : join(root, name);
  writeFile(join(dir, "SKILL.md"), skillMd(name, description, extra, body));
  return dir;
}

/** A hundred skills with names and descriptions of the length real collections have. */
export const HUNDRED_SKILLS: ReadonlyArray<readonly [category: string, name: string, description: string]> = [
  ["apple", "apple-notes", "Create, search and edit Apple Notes from the terminal with osascript."],
  ["apple", "apple-reminders", "Manage Apple Reminders lists and due dates through the reminders CLI."],
  ["apple", "imessage", "Read and send iMessages on macOS using the Messages database and AppleScript."],
  ["apple", "findmy", "Locate Apple devices and AirTags through the Find My app data on macOS."],
  [
    "autonomous-ai-agents",
    "claude-code",
    "Delegate coding tasks to Claude Code in a tmux session and review its diff.",
  ],
  ["autonomous-ai-agents", "codex", "Run OpenAI Codex CLI on a task and collect its patch for review."],
  [
    "autonomous-ai-agents",
    "opencode",
    "Drive the opencode agent non-interactively for multi-file refactors.",
  ],
  [
    "autonomous-ai-agents",
    "hermes-subagents",
    "Split a large job into parallel delegate_task calls and merge the results.",
  ],
  ["creative", "ascii-art", "Render banners and diagrams as ASCII art with figlet and boxes."],
  ["creative", "excalidraw", "Produce Excalidraw JSON diagrams for architecture sketches and flows."],
  ["creative", "songwriting", "Write song lyrics with verse/chorus structure, rhyme and meter checks."],
  ["creative", "story-outline", "Outline a short story: premise, characters, beats and a scene list."],
  [
    "creative",
    "image-prompting",
    "Write prompts for image models with subject, style, lighting and camera terms.",
  ],
  ["data-science", "jupyter-live-kernel", "Run code in a live Jupyter kernel and keep state between cells."],
  ["data-science", "pandas-cleanup", "Clean messy CSV data with pandas: types, missing values, duplicates."],
  ["data-science", "plotting", "Make clear matplotlib charts with labelled axes and saved PNG output."],
  ["data-science", "sql-analysis", "Answer questions from a SQLite or Postgres database with careful SQL."],
  [
    "data-science",
    "statistics-sanity",
    "Check sample sizes, confidence intervals and test choice before claiming results.",
  ],
  [
    "devops",
    "docker-debugging",
    "Debug failing Docker builds and containers: layers, logs, exec, networking.",
  ],
  [
    "devops",
    "kubernetes-triage",
    "Triage a broken Kubernetes deployment with kubectl describe, logs and events.",
  ],
  ["devops", "nginx-config", "Write and test nginx server blocks, TLS and reverse proxy settings."],
  ["devops", "systemd-services", "Create, enable and debug systemd units and timers on Linux."],
  ["devops", "terraform-plan-review", "Review a terraform plan for destructive changes before apply."],
  ["devops", "ssh-hardening", "Harden an SSH server: keys only, no root login, fail2ban, audit."],
  ["devops", "log-investigation", "Search journald and application logs for the first error in an incident."],
  ["devops", "backup-restore", "Set up restic backups and rehearse a restore to prove they work."],
  ["email", "himalaya", "Read, search and send email from the terminal with the himalaya CLI."],
  ["email", "inbox-triage", "Sort an inbox into reply, delegate, archive; draft short replies."],
  ["gaming", "minecraft-server", "Install and run a Minecraft server with backups and whitelist."],
  ["gaming", "pokemon-player", "Play Pokémon through an emulator API, tracking party and goals."],
  ["github", "github-pr-workflow", "Branch, commit, push and open a pull request with gh, then follow CI."],
  ["github", "github-issues", "Search, triage and label GitHub issues with gh and write clear reports."],
  ["github", "github-code-review", "Review a pull request with gh: checkout, run tests, comment inline."],
  ["github", "github-actions-debug", "Find why a GitHub Actions workflow fails using run logs and reruns."],
  ["github", "github-release", "Cut a release: changelog, tag, gh release create and assets."],
  ["github", "repo-bootstrap", "Start a new repository with license, README, CI and branch protection."],
  ["leisure", "find-nearby", "Find nearby places such as restaurants or pharmacies using map search."],
  ["leisure", "recipe-planner", "Plan meals for a week and build a grocery list from recipes."],
  ["leisure", "travel-itinerary", "Draft a day-by-day travel itinerary with transit times and bookings."],
  ["media", "youtube-content", "Fetch YouTube transcripts and turn them into notes or summaries."],
  ["media", "gif-search", "Search Tenor for a GIF matching a mood and return its link."],
  ["media", "ffmpeg-recipes", "Convert, trim, compress and extract audio from video with ffmpeg."],
  ["media", "podcast-notes", "Transcribe a podcast episode and write timestamped show notes."],
  ["media", "spotify", "Control Spotify playback and playlists through the Web API."],
  ["mlops", "axolotl", "Fine-tune LLMs with Axolotl YAML configs, LoRA and QLoRA."],
  ["mlops", "vllm-serving", "Serve a model with vLLM, tune batch size and check throughput."],
  ["mlops", "gguf-quantize", "Convert a Hugging Face model to GGUF and quantize it with llama.cpp."],
  ["mlops", "eval-harness", "Evaluate a model on standard benchmarks with lm-evaluation-harness."],
  ["mlops", "wandb-tracking", "Log training runs to Weights & Biases and compare them."],
  ["mlops", "dataset-curation", "Deduplicate, filter and split a training dataset with provenance notes."],
  ["mlops", "gpu-profiling", "Profile GPU memory and kernels with nvidia-smi and torch profiler."],
  ["mlops", "huggingface-hub", "Upload and download models and datasets with huggingface-cli."],
  ["note-taking", "obsidian", "Create and link notes in an Obsidian vault with consistent frontmatter."],
  ["note-taking", "llm-wiki", "Maintain a personal wiki of facts learned across sessions."],
  ["note-taking", "meeting-notes", "Turn a meeting transcript into decisions, actions and owners."],
  ["productivity", "google-workspace", "Use Gmail, Calendar and Drive through the gws CLI with OAuth."],
  ["productivity", "notion", "Read and update Notion pages and databases through the API."],
  ["productivity", "linear", "Create and update Linear issues and cycles from the terminal."],
  ["productivity", "pdf-tools", "Extract text, merge, split and fill PDF forms with qpdf and pdftotext."],
  [
    "productivity",
    "spreadsheet-formulas",
    "Build spreadsheet formulas and pivot summaries that others can audit.",
  ],
  ["productivity", "daily-briefing", "Assemble a morning briefing from calendar, mail and news."],
  ["productivity", "ocr-documents", "OCR scanned documents with tesseract and fix common errors."],
  ["productivity", "powerpoint", "Generate a slide deck with python-pptx from an outline."],
  ["research", "arxiv", "Search arXiv, read abstracts and download papers by topic."],
  ["research", "literature-review", "Survey papers on a topic and write a structured review with citations."],
  ["research", "web-research", "Answer a question from several web sources and cite each claim."],
  ["research", "fact-check", "Verify a claim against primary sources and rate its accuracy."],
  ["research", "polymarket", "Read Polymarket prices and summarise market sentiment on events."],
  ["research", "patent-search", "Search patents by keyword and classification and summarise claims."],
  ["research", "competitive-analysis", "Compare products on features, pricing and positioning in a table."],
  ["smart-home", "openhue", "Control Philips Hue lights and scenes with the openhue CLI."],
  ["smart-home", "home-assistant", "Query and control Home Assistant entities and automations."],
  ["social-media", "xitter", "Post, read and search X (Twitter) through the official API."],
  ["social-media", "bluesky", "Post and read Bluesky threads with the AT Protocol client."],
  ["social-media", "thread-writer", "Turn an article into a short thread with a hook and clear steps."],
  [
    "software-development",
    "systematic-debugging",
    "Find a bug's root cause by reproducing, isolating and testing hypotheses.",
  ],
  [
    "software-development",
    "code-review",
    "Review a change for correctness, tests, security and readability.",
  ],
  [
    "software-development",
    "writing-plans",
    "Write an implementation plan with small verifiable steps before coding.",
  ],
  [
    "software-development",
    "test-driven-development",
    "Write a failing test first, make it pass, then refactor.",
  ],
  [
    "software-development",
    "refactoring",
    "Restructure code in small behaviour-preserving steps with tests green.",
  ],
  [
    "software-development",
    "performance-profiling",
    "Measure before optimising: profile, find the hot path, compare timings.",
  ],
  [
    "software-development",
    "api-design",
    "Design a REST or RPC API: resources, errors, versioning and pagination.",
  ],
  [
    "software-development",
    "dependency-upgrade",
    "Upgrade a dependency safely: changelog, lockfile, tests, rollback plan.",
  ],
  [
    "software-development",
    "git-archaeology",
    "Use git log, blame and bisect to find when and why code changed.",
  ],
  ["software-development", "typescript-strict", "Migrate a TypeScript project to strict mode file by file."],
  [
    "software-development",
    "python-packaging",
    "Package a Python project with pyproject.toml and publish to PyPI.",
  ],
  ["software-development", "rust-errors", "Read and fix Rust borrow checker and lifetime errors."],
  ["software-development", "regex-crafting", "Write and test regular expressions against sample inputs."],
  [
    "software-development",
    "security-audit",
    "Audit code for injection, secrets, unsafe deserialisation and authz gaps.",
  ],
  [
    "software-development",
    "database-migrations",
    "Write reversible schema migrations and test them on a copy.",
  ],
  ["software-development", "ci-setup", "Set up CI with lint, type check, tests and caching."],
  [
    "software-development",
    "frontend-debugging",
    "Debug a web page with the browser console, network tab and snapshots.",
  ],
  [
    "software-development",
    "shell-scripting",
    "Write robust bash scripts with set -euo pipefail and quoting.",
  ],
  ["software-development", "docs-writing", "Write READMEs and guides that start with a working example."],
  [
    "software-development",
    "monorepo-navigation",
    "Find your way around a large monorepo with ripgrep and build graphs.",
  ],
  ["hermes", "creating-skills", "Write a good SKILL.md for this agent: triggers, steps, pitfalls, checks."],
  ["hermes", "hermes-config", "Change Hermes settings in config.yaml and .env and verify them."],
  ["hermes", "cron-jobs", "Schedule recurring Hermes tasks with cronjob and check their output."],
  ["hermes", "memory-hygiene", "Keep MEMORY.md and USER.md short, current and free of duplicates."],
  ["", "translate", "Translate text while keeping formatting, names and technical terms."],
];

/** SkillMeta objects for {@link HUNDRED_SKILLS}, sorted as discovery sorts them. */
export function hundredSkillMetas(): SkillMeta[] {
  return HUNDRED_SKILLS.map(([category, name, description]) => meta(name, description, category)).sort(
    (a, b) => (a.category !== b.category ? (a.category < b.category ? -1 : 1) : a.name < b.name ? -1 : 1),
  );
}

export function meta(name: string, description: string, category = ""): SkillMeta {
  return {
    name,
    description,
    category,
    tags: [],
    platforms: [],
    dir: `/skills/${category}/${name}`,
    file: `/skills/${category}/${name}/SKILL.md`,
    source: "home",
    origin: "user",
    requiredEnv: [],
    missingEnv: [],
    linkedFiles: [],
  };
}
