/** Small real images for tests of image input. */

/** A valid 1x1 PNG. */
export const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/** `data:` URL of {@link PNG_1X1}, as a user message's image part carries it. */
export const PNG_1X1_URL = `data:image/png;base64,${PNG_1X1.toString("base64")}`;
