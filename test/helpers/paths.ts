import { fileURLToPath } from 'node:url';

/** The absolute path of `name` under test/fixtures, whatever folder the test asking for it sits in. */
export const fixturePath = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
