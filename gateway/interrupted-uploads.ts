// The start-up sweep of uploads a crash interrupted. upload.ts keeps the bytes, then registers the
// catalog row, then submits and marks the row submitted; a row still pending at 0% that was written
// before this process started lost its submission (or only its mark). With its kept original (the
// same content hash) it is submitted again as the same version — a duplicate the stages skip, when
// the first did go out — and without one it fails with the reason, instead of staying pending.
// With several gateways, one sweeps at a time: each takes the sweep's lease (lib/leases/) first, so
// two starting together do not submit the same rows twice, and stops if it loses it. A row another
// live gateway registered just before this one started may be submitted again too: a duplicate
// the stages skip, as above.
import { createHash } from "node:crypto";
import type { DocumentRecord } from "../lib/domain.ts";
import type { Leases } from "../lib/leases/leases.ts";
import type { Logger } from "../lib/logger.ts";

export interface SweepDeps {
  /** Every pending document of every knowledge base. */
  pendingDocuments(): Promise<DocumentRecord[]>;
  readOriginal(knowledgeBaseId: string, documentId: string): Promise<Uint8Array | undefined>;
  /** Submits the version again with these bytes (upload.ts's publishSubmission). */
  resubmit(document: DocumentRecord, content: Uint8Array): Promise<void>;
  /** Marks the version failed with the reason. */
  fail(document: DocumentRecord, reason: string): Promise<void>;
  logger: Logger;
  /** Throws (LeaseLostError) when the sweep is no longer this process's to run. */
  assertOwned?(): void;
}

export const SWEEP_LEASE = "gateway:interrupted-uploads";

export const NOT_KEPT_REASON =
  "the upload was interrupted (the server stopped) before its content was stored; upload the file again";

/** Sweeps rows last written before `startedAt`; returns what it did. */
export async function sweepInterruptedUploads(deps: SweepDeps, startedAt: Date): Promise<{ resubmitted: string[]; failed: string[] }> {
  const resubmitted: string[] = [];
  const failed: string[] = [];
  for (const document of await deps.pendingDocuments()) {
    if (document.status !== "pending" || document.progressPercent > 0 || document.updatedAt >= startedAt) continue;
    deps.assertOwned?.();
    const content = await deps.readOriginal(document.knowledgeBaseId, document.id);
    const intact = content !== undefined && createHash("sha256").update(content).digest("hex") === document.contentHash;
    if (intact) {
      await deps.resubmit(document, content);
      resubmitted.push(document.id);
    } else {
      await deps.fail(document, NOT_KEPT_REASON);
      failed.push(document.id);
    }
  }
  if (resubmitted.length + failed.length > 0) deps.logger.info({ resubmitted: resubmitted.length, failed: failed.length }, "uploads a stop interrupted: submitted again or failed");
  return { resubmitted, failed };
}

/** The sweep once this gateway holds its lease (waiting while another gateway sweeps); released after. */
export async function sweepUnderLease(leases: Leases, deps: SweepDeps, startedAt: Date, signal?: AbortSignal): Promise<{ resubmitted: string[]; failed: string[] }> {
  const lease = await leases.acquire(SWEEP_LEASE, { signal });
  try {
    return await sweepInterruptedUploads({ ...deps, assertOwned: () => lease.assertOwned() }, startedAt);
  } finally {
    await lease.release();
  }
}
