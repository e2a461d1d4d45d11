/**
 * `/image PATH` and `/paste`: images that go with the next message (upstream's CLI commands).
 * `/image` alone lists what waits; `/image clear` drops it. The surface keeps the images
 * (`ctx.attachments`) and sends them with the message typed next, in the model's own image format.
 */
import { completePath } from "../agent/references/complete.js";
import type { CommandContext, CommandDef, ImageAttachments, PendingImage } from "./types.js";

function attachmentsOf(ctx: CommandContext): ImageAttachments {
  if (!ctx.attachments) throw new Error("Images cannot be attached here.");
  return ctx.attachments;
}

function size(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function attachedLine(ctx: CommandContext, image: PendingImage, waiting: number): string[] {
  const s = ctx.paint;
  const lines = [
    `${s.green("📎")} Attached ${image.path} (${size(image.bytes)}): it goes with your next message${waiting > 1 ? ` (${waiting} images wait)` : ""}.`,
  ];
  if (image.note) lines.push(s.dim(`   ${image.note}`));
  return lines;
}

const imageCommand: CommandDef = {
  name: "image",
  args: "<path> | clear",
  description: "attach an image file to your next message (/image alone lists what waits)",
  category: "Turn",
  surfaces: "repl",
  availableWhileRunning: true,
  completeArgs: (prefix, ctx) => completePath(prefix, { cwd: ctx.session.agent.cwd }),
  async run(args, ctx) {
    const attachments = attachmentsOf(ctx);
    const s = ctx.paint;
    const arg = args.trim();
    if (arg === "") {
      const pending = attachments.pending();
      if (pending.length === 0) {
        ctx.reply(s.dim("No images wait. Attach one with /image PATH or /paste (from the clipboard)."));
        return;
      }
      ctx.reply(
        `${pending.length} image${pending.length === 1 ? "" : "s"} go with your next message:`,
        ...pending.map((p) => `  ${p.path} (${size(p.bytes)})`),
        s.dim("/image clear drops them."),
      );
      return;
    }
    if (arg === "clear") {
      const dropped = attachments.clear();
      ctx.reply(
        dropped === 0
          ? s.dim("No images were waiting.")
          : `Dropped ${dropped} image${dropped === 1 ? "" : "s"}.`,
      );
      return;
    }
    // A path may be quoted (as a terminal writes a dragged file with spaces).
    const path = /^(["'])(.*)\1$/.exec(arg)?.[2] ?? arg.replace(/\\(.)/g, "$1");
    const image = await attachments.attach(path);
    ctx.reply(...attachedLine(ctx, image, attachments.pending().length));
  },
};

const pasteCommand: CommandDef = {
  name: "paste",
  description: "attach the image on the clipboard to your next message",
  category: "Turn",
  surfaces: "repl",
  availableWhileRunning: true,
  async run(_args, ctx) {
    const attachments = attachmentsOf(ctx);
    const image = await attachments.paste();
    ctx.reply(...attachedLine(ctx, image, attachments.pending().length));
  },
};

export const INPUT_COMMANDS: readonly CommandDef[] = [imageCommand, pasteCommand];
