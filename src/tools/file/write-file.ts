/** write_file: atomic create-or-replace with write guards and a staleness check. */
import { Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import { ENCODING_LABELS } from "../../util/text-encoding.js";
import { defineTool } from "../types.js";
import { encodeFor, existingEncoding } from "./encoded-text.js";
import { fileAccess } from "./file-access.js";
import { assertFresh, recordWritten } from "./file-state.js";
import { countLines, displayPath, errorCode } from "./shared.js";
import description from "./write-file.md";
import { guardWrite, refuseSecretWrite } from "./write-guard.js";

const parameters = Type.Object({
  path: Type.String({ description: "File path: absolute, relative to the working directory, or ~/..." }),
  content: Type.String({ description: "The complete new content of the file." }),
});

export const writeFileTool = defineTool({
  name: "write_file",
  toolset: "file",
  description,
  parameters,
  emoji: "✍️",
  pathScoped: (args, cwd) => [resolvePath(args.path, cwd)],
  async handler(args, ctx) {
    const files = await fileAccess(ctx);
    const abs = files.resolve(args.path);
    refuseSecretWrite(ctx, abs, files.env);
    const existing = await files.stat(abs);
    if (existing?.isDirectory()) throw new Error(`${args.path} is a directory; give a file path to write.`);
    assertFresh(ctx, abs, existing, files.cwd);
    // An overwrite keeps the file's encoding (and BOM); a character it cannot hold is refused here.
    const encoding = await existingEncoding(files, abs, existing?.size);
    const data = encodeFor(args.content, encoding, args.path);
    // Asked last, so the user is never asked about a write that would fail anyway.
    await guardWrite(ctx, abs, "write_file", undefined, files.env);
    try {
      await files.writeText(abs, data);
    } catch (error) {
      const code = errorCode(error);
      if (code === "EACCES" || code === "EPERM" || code === "EROFS") {
        throw new Error(`Cannot write ${args.path}: permission denied (${code}).`);
      }
      if (code === "ENOTDIR" || code === "EEXIST") {
        throw new Error(`Cannot write ${args.path}: a parent of it exists and is not a directory.`);
      }
      throw error;
    }
    await recordWritten(ctx, abs, files.stat);
    const bytes = typeof data === "string" ? Buffer.byteLength(data, "utf8") : data.length;
    const verb = existing ? "Overwrote" : "Created";
    const kept = encoding === "utf-8" ? "" : `, kept ${ENCODING_LABELS[encoding]}`;
    return `${verb} ${displayPath(abs, files.cwd)} (${bytes} bytes, ${countLines(args.content)} lines${kept}).`;
  },
});
