import type { RedfishClient } from './client.js';
import { linkOf, readCollection, rootLink } from './discovery.js';
import { RedfishError } from './errors.js';

interface ManagerAccount {
  UserName?: string;
}

/** A ManagerAccount found by UserName, with the ETag a conditional PATCH names. */
export interface AccountRef {
  uri: string;
  etag: string | undefined;
}

/** The password lengths the BMC's AccountService advertises (absent: it does not say). */
export interface PasswordPolicy {
  minLength?: number;
  maxLength?: number;
}

interface AccountServiceBody {
  Accounts?: unknown;
  MinPasswordLength?: number;
  MaxPasswordLength?: number;
}

async function accountService(client: RedfishClient): Promise<{ uri: string; body: AccountServiceBody }> {
  const uri = await rootLink(client, 'AccountService');
  return { uri, body: await client.get<AccountServiceBody>(uri) };
}

export async function readPasswordPolicy(client: RedfishClient): Promise<PasswordPolicy> {
  const { body } = await accountService(client);
  return {
    ...(typeof body.MinPasswordLength === 'number' ? { minLength: body.MinPasswordLength } : {}),
    ...(typeof body.MaxPasswordLength === 'number' ? { maxLength: body.MaxPasswordLength } : {}),
  };
}

/** The AccountService member whose UserName is `userName`; NotFound names the collection when none is. */
export async function findAccount(client: RedfishClient, userName: string): Promise<AccountRef> {
  return client.discovered(async () => {
    const service = await accountService(client);
    const accounts = linkOf(service.body, 'Accounts');
    if (!accounts)
      throw new RedfishError('FailedPrecondition', client.bmc, service.uri, 'AccountService links no Accounts');
    for (const uri of (await readCollection(client, accounts)).members) {
      const { body, etag } = await client.getWithEtag<ManagerAccount>(uri);
      if (body.UserName === userName) return { uri, etag };
    }
    throw new RedfishError('NotFound', client.bmc, accounts, `no account with UserName ${userName}`);
  });
}

/**
 * Sets the password of the account named `userName` (PATCH Password, If-Match the ETag read with it). A BMC's error
 * may quote the value it refused: the password is cut out of the cause before the error leaves, so it can be logged.
 */
export async function setAccountPassword(client: RedfishClient, userName: string, password: string): Promise<void> {
  const account = await findAccount(client, userName);
  try {
    await client.patch(account.uri, { Password: password }, account.etag ? { etag: account.etag } : {});
  } catch (err) {
    if (!(err instanceof RedfishError)) throw err;
    const cause = err.causeText.split(password).join('(redacted)');
    throw new RedfishError(err.code, err.bmc, err.uri, `password change refused: ${cause}`, err.status);
  }
}
