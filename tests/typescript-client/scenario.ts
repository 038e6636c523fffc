// A scenario run with the types openapi-typescript generated from the admin API's document
// (schema.d.ts, written beside this file by the suite), through openapi-fetch. tsc checks it
// against those types before it runs: a document that declares answers as they are not sent
// fails here first.
//
// Usage: node out/scenario.js BASE_URL API_KEY. Prints one line per step; exits non-zero on the
// first surprise.

import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

const [baseUrl, key] = process.argv.slice(2);
if (!baseUrl || !key) {
  throw new Error("usage: scenario.js BASE_URL API_KEY");
}
const api = createClient<paths>({ baseUrl, headers: { "x-api-key": key } });

function expect(condition: boolean, what: string): void {
  if (!condition) {
    console.error(`unexpected: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const realm = await api.POST("/realms", { body: { id: "typed", displayName: "Typed" } });
expect(realm.response.status === 201 && realm.data?.data.id === "typed", "a realm created, its id in data");

const client = await api.POST("/realms/{realm}/clients", {
  params: { path: { realm: "typed" } },
  body: { id: "billing", clientConfiguration: { grantTypes: ["client_credentials"] } },
});
expect(client.data?.data.clientSecret?.startsWith("cstl_cs_") === true, "a client, its secret once");

for (const username of ["ada", "bea", "cy"]) {
  const person = await api.POST("/realms/{realm}/users", {
    params: { path: { realm: "typed" } },
    body: { username, email: `${username}@example.com` },
  });
  expect(person.data?.data.username === username, `a person, ${username}`);
}

const first = await api.GET("/realms/{realm}/users", {
  params: { path: { realm: "typed" }, query: { pageSize: 2, sortBy: "username", sortDirection: "asc" } },
});
const page = first.data?.pagination;
expect(
  page?.items.map((person) => person.username).join(",") === "ada,bea" && page.totalItems === 3 && page.totalPages === 2,
  "the first page of two, out of three",
);

const missing = await api.GET("/realms/{realm}/users/{userId}", {
  params: { path: { realm: "typed", userId: "no-such-person" } },
});
expect(
  missing.response.status === 404 && missing.error?.errorCode === "NotFound" && (missing.error.requestId ?? "") !== "",
  "an error read as the error envelope, with its code and request id",
);

const refused = await api.POST("/realms", { body: { id: "Not A Valid Id" } });
expect(
  refused.response.status === 400 &&
    refused.error?.errorCode === "ValidationFailed" &&
    refused.error.notifications[0]?.field === "id",
  "a validation failure names the refused field",
);
