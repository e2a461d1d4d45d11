import { describe, expect, it } from "vitest";
import type { HermesConfig } from "../../../src/config/defaults.js";
import { homeChannel } from "../../../src/gateway/messaging/deliver.js";

const config = {} as HermesConfig;

describe("homeChannel", () => {
  it("reads <PLATFORM>_HOME_CHANNEL, chat and thread", () => {
    expect(homeChannel("telegram", { TELEGRAM_HOME_CHANNEL: "-100123:7" }, config)).toMatchObject({
      chatId: "-100123",
      threadId: "7",
    });
  });

  it("takes upstream's MATRIX_HOME_ROOM for Matrix, and MATRIX_HOME_CHANNEL first", () => {
    const room = homeChannel("matrix", { MATRIX_HOME_ROOM: "!abc:example.org" }, config);
    expect(room).toBeDefined();
    const both = homeChannel(
      "matrix",
      { MATRIX_HOME_ROOM: "!abc:example.org", MATRIX_HOME_CHANNEL: "!def:example.org" },
      config,
    );
    expect(both).toEqual(homeChannel("matrix", { MATRIX_HOME_CHANNEL: "!def:example.org" }, config));
    expect(homeChannel("telegram", { MATRIX_HOME_ROOM: "!abc:example.org" }, config)).toBeUndefined();
  });
});
