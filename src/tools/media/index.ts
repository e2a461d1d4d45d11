import { imageGenerateTool } from "./image-generate.js";
import { textToSpeechTool } from "./tts.js";
import { visionAnalyzeTool } from "./vision.js";

/** The media tools: image analysis, image generation, text to speech. */
export const mediaTools = [visionAnalyzeTool, imageGenerateTool, textToSpeechTool];

export { type TranscribeOptions, type Transcription, transcribeAudio } from "./transcribe.js";
