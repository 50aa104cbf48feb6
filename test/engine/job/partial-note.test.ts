// What a resource written `partial` says in `last_error` (src/engine/job/partial-note.ts), pure:
// a list not whole names its sign, items refused alone are counted with the first reason, a
// resource that is both says both, and one that is neither says nothing (a success clears).
import { describe, expect, it } from 'vitest';
import { partialNote } from '../../../src/engine/job/partial-note.ts';
import { refusalDetails } from '../../../src/engine/kit/item-refusals.ts';

const CANNOT = 'which Postgres cannot store exactly';

describe('partialNote', () => {
  it('names the sign of an incomplete list', () => {
    expect(partialNote({ listed: 2, incomplete: 'pageInfo.hasNextPage = true' })).toBe('incomplete: pageInfo.hasNextPage = true');
  });

  it('counts the items refused alone and names the first', () => {
    const one = refusalDetails([{ index: 1, item: {}, reason: `data[1].displayName holds U+0000, ${CANNOT}` }]);
    expect(partialNote(one)).toBe(`1 item refused: data[1].displayName holds U+0000, ${CANNOT}`);
    const two = refusalDetails([
      { index: 1, item: {}, reason: `data.rows[1][0] holds U+0000, ${CANNOT}` },
      { index: 4, item: {}, reason: 'item 4 of the list is a string where its siblings are objects' },
    ]);
    expect(partialNote(two)).toBe(`2 items refused: data.rows[1][0] holds U+0000, ${CANNOT}`);
  });

  it('says both, the sign first, when a list is incomplete and has items refused', () => {
    const details = { incomplete: 'header X-Total-Count = 4, 2 items read', ...refusalDetails([{ index: 0, item: {}, reason: `data[0].name holds U+0000, ${CANNOT}` }]) };
    expect(partialNote(details)).toBe(`incomplete: header X-Total-Count = 4, 2 items read; 1 item refused: data[0].name holds U+0000, ${CANNOT}`);
  });

  it('says nothing of whole details, none, or other shapes', () => {
    for (const d of [null, undefined, 'x', [], {}, { listed: 3, complete: true }, { refusedItems: 0, refused: [] }, { incomplete: '' }]) expect(partialNote(d), JSON.stringify(d)).toBeNull();
  });
});
