/** Placeholder replaced below. */
export async function runValidationCampaign(_v: string[], _s: [number, number], _j: number): Promise<number> {
  throw new Error('not yet');
}
