"""A scenario run with the client openapi-python-client generated from the admin API's document.

Usage: python python_scenario.py CLIENT_PARENT_DIR BASE_URL API_KEY. The client package is
`castellan_admin` under CLIENT_PARENT_DIR. Creates a realm, a client and three people, pages
through them, and reads an error, each answer parsed by the generated models; prints one line
per step and exits non-zero on the first surprise.
"""

import sys

sys.path.insert(0, sys.argv[1])

from castellan_admin import AuthenticatedClient  # noqa: E402
from castellan_admin.api.clients import create_realm_client  # noqa: E402
from castellan_admin.api.realm_users import create_realm_user, get_realm_user, list_realm_users  # noqa: E402
from castellan_admin.api.realms import create_realm  # noqa: E402
from castellan_admin.models import (  # noqa: E402
    ClientConfigurationInput,
    ClientInput,
    ErrorEnvelope,
    RealmInput,
    UserInput,
)


def expect(condition, what):
    if not condition:
        sys.exit(f"unexpected: {what}")
    print(f"ok: {what}")


def main():
    base_url, key = sys.argv[2], sys.argv[3]
    api = AuthenticatedClient(base_url=base_url, token=key, prefix="", auth_header_name="x-api-key")

    realm = create_realm.sync_detailed(client=api, body=RealmInput(id="generated", display_name="Generated"))
    expect(realm.status_code == 201 and realm.parsed.data.id == "generated", "a realm created, its id in data")

    configuration = ClientConfigurationInput(grant_types=["client_credentials"])
    client = create_realm_client.sync_detailed(
        "generated", client=api, body=ClientInput(id="billing", client_configuration=configuration)
    )
    parsed = client.parsed.data
    expect(client.status_code == 201 and parsed.client_secret.startswith("cstl_cs_"), "a client, its secret once")

    for name in ["ada", "bea", "cy"]:
        user = create_realm_user.sync_detailed(
            "generated", client=api, body=UserInput(username=name, email=f"{name}@example.com")
        )
        expect(user.status_code == 201 and user.parsed.data.username == name, f"a person, {name}")

    first = list_realm_users.sync_detailed(
        "generated", client=api, page_size=2, sort_by="username", sort_direction="asc"
    )
    page = first.parsed.pagination
    expect(
        [u.username for u in page.items] == ["ada", "bea"] and page.total_items == 3 and page.total_pages == 2,
        "the first page of two, out of three",
    )
    second = list_realm_users.sync_detailed(
        "generated", client=api, page_size=2, page_number=2, sort_by="username", sort_direction="asc"
    )
    expect([u.username for u in second.parsed.pagination.items] == ["cy"], "the second page")

    missing = get_realm_user.sync_detailed("generated", "no-such-person", client=api)
    expect(
        missing.status_code == 404
        and isinstance(missing.parsed, ErrorEnvelope)
        and missing.parsed.error_code.value == "NotFound"
        and missing.parsed.request_id,
        "an error read as the error envelope, with its code and request id",
    )
    refused = create_realm.sync_detailed(client=api, body=RealmInput(id="Not A Valid Id"))
    expect(
        refused.status_code == 400
        and refused.parsed.error_code.value == "ValidationFailed"
        and refused.parsed.notifications[0].field == "id",
        "a validation failure names the refused field",
    )


if __name__ == "__main__":
    main()
