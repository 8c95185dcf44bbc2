/** Drops undefined fields, so results compare cleanly and respect exactOptionalPropertyTypes. */
export function compact<T extends object>(o: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
