/** Moved to util/ so the command layer can lay out text too; kept here for the TUI's imports. */
export * from "../../util/text-width.js";
