/** The Responses store lives in state/gateway/ (any backend implements `ResponseRecords`). */
export {
  RESPONSE_STORE_FILE,
  type ResponseRecords,
  ResponseStore,
  responseRecords,
  type StoredResponse,
} from "../../state/gateway/response-store.js";
