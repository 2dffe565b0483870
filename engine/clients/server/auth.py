"""Who may connect: one user and password, checked by mysql-mimic's mysql_native_password plugin.

Without a configured password (allowed on a loopback address only) any user name connects with an
empty password, like a fresh MySQL install's root on localhost. With one, only the configured user
connects, and only with that password. An unknown user gets the same "Access denied" (1045) as a
wrong password, so names cannot be probed.

mysql-mimic 3 has no caching_sha2_password server plugin (its authentication loop always waits for a
client reply after "more data", which the fast-auth success of that plugin never sends). A client
that starts with caching_sha2_password (MySQL 8 clients do) is switched to mysql_native_password
by mysql-mimic's auth-switch request; the password is never sent in clear.
"""
from __future__ import annotations

import secrets
from collections.abc import Sequence

from mysql_mimic import AuthPlugin, IdentityProvider, NativePasswordAuthPlugin, User


class Accounts(IdentityProvider):
    def __init__(self, user: str | None, password: str | None):
        self.user = user
        self.password = password
        self._unmatchable = secrets.token_hex(20)

    def get_plugins(self) -> Sequence[AuthPlugin]:
        return [NativePasswordAuthPlugin()]

    async def get_user(self, username: str) -> User | None:
        if self.user is not None and username != self.user:
            return User(name=username, auth_string=self._unmatchable, auth_plugin=NativePasswordAuthPlugin.name)
        auth = NativePasswordAuthPlugin.create_auth_string(self.password) if self.password else None
        return User(name=username, auth_string=auth, auth_plugin=NativePasswordAuthPlugin.name)
