import { QuarryService } from "../../gen/quarry/gateway/v1/gateway_pb.ts";

/**
 * The requests the status view lists as the slowest: the public API's, except the status call
 * itself, which the System page makes every few seconds and would otherwise crowd the list.
 */
export function publicRequests(service: string, method: string): boolean {
  return service === QuarryService.typeName && method !== "GetSystemStatus";
}
