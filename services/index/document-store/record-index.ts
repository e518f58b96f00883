// An index of records of its own beside the catalog (<prefix>-api-keys, -assistants,
// -conversations, -sources), the steps its stores share: the index created with its mapping on
// first use, each call's failure translated once (callStore), and a unique name kept the one way
// these engines can: a reservation record whose id derives from the name, which create() makes
// only once.
import { AlreadyExistsError } from "../../../lib/errors.ts";
import { replicationSettings } from "../../../lib/index-replication.ts";
import { callStore, findRecord, indexCreator, type DocumentStorePort } from "./document-store-port.ts";

export class RecordIndex {
  private readonly ensureIndex: () => Promise<void>;

  constructor(
    private readonly store: DocumentStorePort,
    private readonly index: string,
    mappings: Record<string, unknown>,
    /** Unset: one replica where the cluster has a second data node (index-replication.ts). */
    replicas?: number,
  ) {
    this.ensureIndex = indexCreator(store, index, () => ({ settings: replicationSettings(replicas), mappings }));
  }

  /** Runs fn once the index exists; a failure comes out as a domain error (`what` names the step). */
  call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return callStore(this.store, this.ensureIndex, what, fn);
  }

  /** Creates the name's reservation record; AlreadyExistsError(taken) when it exists. */
  async reserve(reservationId: string, reservation: Record<string, unknown>, taken: string): Promise<void> {
    try {
      await this.store.create(this.index, reservationId, reservation);
    } catch (error) {
      if (this.store.errors.isResponseError(error, 409)) throw new AlreadyExistsError(taken, { cause: error });
      throw error;
    }
  }

  /** The record with this id, else the one the name's reservation ({ id }) points at; undefined when neither. */
  async findByIdOrName<S>(recordId: (id: string) => string, nameRecordId: (name: string) => string, idOrName: string) {
    let found = await findRecord<S>(this.store, this.index, recordId(idOrName));
    if (!found) {
      const reserved = await findRecord<{ id: string }>(this.store, this.index, nameRecordId(idOrName));
      if (reserved) found = await findRecord<S>(this.store, this.index, recordId(reserved.source.id));
    }
    return found;
  }
}

/** A record index's mapping: strict, with the record_type and id every record of these stores has. */
export function recordMappings(properties: Record<string, unknown>): Record<string, unknown> {
  return { dynamic: "strict", properties: { record_type: { type: "keyword" }, id: { type: "keyword" }, ...properties } };
}

/** The base of a store kept in an index of records of its own: its port, its index and the steps they share. */
export abstract class RecordStore {
  protected readonly records: RecordIndex;

  protected constructor(
    protected readonly store: DocumentStorePort,
    protected readonly index: string,
    mappings: Record<string, unknown>,
    /** Unset: one replica where the cluster has a second data node (index-replication.ts). */
    replicas?: number,
  ) {
    this.records = new RecordIndex(store, index, mappings, replicas);
  }
}
