/**
 * Shapes shared by the skills modules: parsing, discovery, the prompt index, the skill tools and the
 * skills hub. A skill is a folder holding `SKILL.md` (YAML frontmatter plus a markdown body) and
 * optional `references/`, `templates/`, `scripts/` and `assets/`, laid out as Python Hermes lays it
 * out: `<skills root>/<category>/<name>/SKILL.md` (or `<skills root>/<name>/SKILL.md` without a
 * category).
 */

/** Where a discovered skill lives. Home copies win over external folders of the same name. */
export type SkillSource = "home" | "external";

/** Who made a skill, from `skills/.usage.json`, `.bundled_manifest` and `.hub/lock.json`. */
export type SkillOrigin = "bundled" | "hub" | "agent" | "user";

export interface RequiredEnvVar {
  name: string;
  prompt?: string;
  help?: string;
  required_for?: string;
}

/** The frontmatter as read, with the fields Hermes defines typed and everything else kept. */
export interface SkillFrontmatter {
  name: string;
  description: string;
  version?: string;
  author?: string;
  license?: string;
  /** OS gating: `macos`, `linux`, `windows`. Absent or empty: every OS. */
  platforms?: string[];
  tags?: string[];
  category?: string;
  required_environment_variables?: RequiredEnvVar[];
  metadata?: { hermes?: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
}

/** What `skills_list`, the prompt index and `hermes skills list` know about a skill. */
export interface SkillMeta {
  name: string;
  description: string;
  /** Category folder (or frontmatter `category` / `metadata.hermes.category`); "" when none. */
  category: string;
  tags: string[];
  version?: string;
  platforms: string[];
  /** Absolute path of the skill folder. */
  dir: string;
  /** Absolute path of its SKILL.md. */
  file: string;
  source: SkillSource;
  origin: SkillOrigin;
  /** Environment variables the skill declares, and which of them are missing right now. */
  requiredEnv: RequiredEnvVar[];
  missingEnv: string[];
  /** Files under references/, templates/, scripts/, assets/ (paths relative to `dir`). */
  linkedFiles: string[];
}

export interface SkillsConfig {
  external_dirs?: readonly string[];
  disabled?: readonly string[];
}

/**
 * Where a skill change is also kept when skills live in a database (the PostgreSQL backend's
 * library, which mirrors them to the folder the skill tools write in). Called by manage.ts after
 * the skill's folder was changed on disk. A sink that cannot keep the change (another instance
 * changed the skill meanwhile) puts the folder back as the database holds it and throws a
 * `SkillManageError` saying so; the tool call then fails with that message.
 */
export interface SkillWriteSink {
  /** After a create, edit, patch, write_file or remove_file; `dir` is the skill's folder. */
  saved(change: { name: string; dir: string; created: boolean }): Promise<void>;
  /** After the skill's folder was deleted. */
  deleted(change: { name: string; dir: string }): Promise<void>;
  /**
   * After the curator moved the skill's folder `from` into the archive (`to`, a folder under
   * `skills/.archive/`). Throws when the skill changed elsewhere meanwhile (the caller moves it back).
   */
  archived?(change: { name: string; from: string; to: string }): Promise<void>;
  /** After an archived folder (`from`) was moved back to `to`. Throws as `archived` does. */
  restored?(change: { name: string; from: string; to: string }): Promise<void>;
  /**
   * After a change of many folders at once (a rollback, a bundled reset): stores each skill of
   * `names` (default: every one the database holds) whose folder differs from the stored copy and
   * deletes those whose folder is gone; with `includeNew`, also stores folders the database does not
   * hold yet (never bundled ones). Skills the database does not hold are otherwise left alone.
   */
  reconcile?(options?: ReconcileOptions): Promise<SkillReconcileReport>;
}

export interface ReconcileOptions {
  names?: readonly string[];
  includeNew?: boolean;
  /**
   * The whole tree was restored (a curator rollback): the live skills and the curator's archive
   * (`.archive/`) are stored together in one step, every folder on disk counted (`names` and
   * `includeNew` aside), and an archived entry whose skill is live again is dropped.
   */
  tree?: boolean;
}

export interface SkillReconcileReport {
  stored: string[];
  deleted: string[];
  /** Skills that could not be stored (another instance changed them first, a bad file), with why. */
  failed: Array<{ name: string; error: string }>;
}
