/**
 * The patch id of the upgrade test's workflow change (campaign-change.ts); test-only, so no recorded history may carry
 * it (test/e2e/satellite-upgrade.e2e.test.ts). Its own module: the test reads it without loading workflow code.
 */
export const upgradePatchId = 'test-upgrade-campaign-timer';
