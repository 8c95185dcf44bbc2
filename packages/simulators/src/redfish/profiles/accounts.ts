import type { Body } from './types.js';
import { collectionBody, ref, type Tree } from './common.js';

export const ACCOUNT_SERVICE = '/redfish/v1/AccountService';
export const ACCOUNTS = `${ACCOUNT_SERVICE}/Accounts`;
/** The one account a simulated BMC has: the spec's user, an Administrator (Id 1, as OpenBMC numbers them). */
export const ACCOUNT = `${ACCOUNTS}/1`;
export const ROLES = `${ACCOUNT_SERVICE}/Roles`;

/** DSP0268's predefined roles and their privileges, as BMCs serve them (read-only here: no custom roles). */
const predefinedRoles: Record<string, string[]> = {
  Administrator: ['Login', 'ConfigureManager', 'ConfigureUsers', 'ConfigureSelf', 'ConfigureComponents'],
  Operator: ['Login', 'ConfigureSelf', 'ConfigureComponents'],
  ReadOnly: ['Login', 'ConfigureSelf'],
};

/** The password lengths the AccountService advertises; a PATCH outside them is refused (OpenBMC's limits). */
export const passwordLength = { min: 8, max: 20 } as const;

/**
 * AccountService (DSP0268 AccountService, ManagerAccount): one ManagerAccount whose Password is write-only (null when
 * read) and PATCHable. Changing it changes what Basic auth and session logins accept (see SimulatedBmc.changePassword
 * for what happens to open sessions).
 */
export function addAccountService(tree: Tree): void {
  tree.add(ACCOUNT_SERVICE, () => ({
    '@odata.id': ACCOUNT_SERVICE,
    '@odata.type': '#AccountService.v1_13_0.AccountService',
    Id: 'AccountService',
    Name: 'Account Service',
    Description: 'Account Service',
    ServiceEnabled: true,
    Status: { State: 'Enabled', Health: 'OK' },
    MinPasswordLength: passwordLength.min,
    MaxPasswordLength: passwordLength.max,
    AccountLockoutThreshold: 0,
    Accounts: ref(ACCOUNTS),
    Roles: ref(ROLES),
  }));
  const roleUris = Object.keys(predefinedRoles).map((id) => `${ROLES}/${id}`);
  tree.add(ROLES, () => collectionBody(ROLES, 'RoleCollection', 'Roles Collection', roleUris));
  for (const [id, privileges] of Object.entries(predefinedRoles))
    tree.add(`${ROLES}/${id}`, () => ({
      '@odata.id': `${ROLES}/${id}`,
      '@odata.type': '#Role.v1_3_1.Role',
      Id: id,
      Name: `${id} role`,
      Description: `${id} role`,
      RoleId: id,
      IsPredefined: true,
      AssignedPrivileges: privileges,
      OemPrivileges: [],
    }));
  tree.add(ACCOUNTS, () => collectionBody(ACCOUNTS, 'ManagerAccountCollection', 'Accounts Collection', [ACCOUNT]));
  tree.add(
    ACCOUNT,
    (bmc): Body => ({
      '@odata.id': ACCOUNT,
      '@odata.type': '#ManagerAccount.v1_10_0.ManagerAccount',
      Id: '1',
      Name: 'User Account',
      Description: 'User Account',
      UserName: bmc.spec.username,
      RoleId: 'Administrator',
      Enabled: true,
      Locked: false,
      // Write-only: DSP0268 ManagerAccount says Password shall be null in responses.
      Password: null,
      AccountTypes: ['Redfish'],
      Links: { Role: ref(`${ROLES}/Administrator`) },
    }),
    ['Password'],
  );
}
