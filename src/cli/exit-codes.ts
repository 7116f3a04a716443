/** Exit codes (cli.md): compile/validate 0 ok, 2 bad input or usage, 3 internal error; diff and check use 1 for "differs", like kubectl diff. */
export const EXIT = {
  ok: 0,
  differs: 1,
  badInput: 2,
  internal: 3,
} as const;

/** Something the user must fix (flags, files); the message is printed as is. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
