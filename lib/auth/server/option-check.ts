/** The check every numeric option of the resource server goes through when the server is made. */

/**
 * `value` when it is a finite number of at least `least` (an integer when `integer`); otherwise a TypeError
 * naming `option`, so a wrong limit fails at start-up rather than on some later request.
 */
export function checkedNumber(option: string, value: number, least: number, integer = true): number {
  if (!Number.isFinite(value) || value < least || (integer && !Number.isSafeInteger(value))) {
    throw new TypeError(`${option} must be ${integer ? 'an integer' : 'a number'} of at least ${least}, not ${value}`);
  }
  return value;
}
