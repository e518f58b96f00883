// A client stream whose first message carries options and the rest a file's bytes (an archive
// import, the gateway's and the index's): the options at once, the bytes as they come, from one
// iterator so nothing is read twice and nothing is held.
import { InvalidInputError } from "./errors.ts";

type OptionsOrData<O> = { part: { case: "options"; value: O } | { case: "data"; value: Uint8Array } | { case: undefined; value?: undefined } };

export async function optionsThenData<O>(messages: AsyncIterable<OptionsOrData<O>>, what: string): Promise<{ options: O; data: AsyncIterable<Uint8Array> }> {
  const iterator = messages[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value.part.case !== "options") throw new InvalidInputError(`${what}'s first message carries its options, then the bytes`);
  async function* data(): AsyncGenerator<Uint8Array> {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (next.value.part.case !== "data") throw new InvalidInputError(`${what} sends its options once, first`);
      yield next.value.part.value;
    }
  }
  return { options: first.value.part.value, data: data() };
}
