import { describe, expect, it } from "vitest";
import { LiveOutput } from "../../../../src/cli/tui/live-output.js";

describe("LiveOutput", () => {
  it("keeps the last lines, oldest first, with the unfinished line", () => {
    const live = new LiveOutput(3);
    live.push("one\ntwo\nthree\nfour\nfi");
    expect(live.tail()).toEqual(["three", "four", "fi"]);
    live.push("ve\n");
    expect(live.tail()).toEqual(["three", "four", "five"]);
  });

  it("a carriage return starts the line over, as a progress bar redraws", () => {
    const live = new LiveOutput();
    live.push("downloading 10%\rdownloading 55%\r");
    live.push("downloading 100%\r\ndone\n");
    expect(live.tail()).toEqual(["downloading 100%", "done"]);
  });

  it("drops colours, cursor moves, titles and control characters, even split across chunks", () => {
    const live = new LiveOutput();
    live.push("\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x1b[2");
    live.push("J\x1b[Hx\x07\x08y\tz\n");
    expect(live.tail()).toEqual(["red okxy    z"]);
    expect(live.tail().join("")).not.toMatch(/[\x00-\x1f\x7f]/);
  });

  it("skips blank lines and trailing spaces, and is empty before output and after clear", () => {
    const live = new LiveOutput();
    expect(live.tail()).toEqual([]);
    live.push("a   \n\n   \nb\n");
    expect(live.tail()).toEqual(["a", "b"]);
    live.clear();
    expect(live.tail()).toEqual([]);
  });

  it("a line that never ends stays bounded", () => {
    const live = new LiveOutput();
    for (let i = 0; i < 100; i++) live.push("x".repeat(1000));
    expect(live.tail()[0]?.length).toBe(2000);
  });
});
