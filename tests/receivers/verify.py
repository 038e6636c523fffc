"""Verifies one webhook delivery with the receivers' own libraries: Stripe's and Standard Webhooks'.

Reads a JSON object from standard input: {"secret": ..., "body": <the raw body as text>,
"headers": {name: value}}. Prints a JSON object naming, for each library, "verified" or the error
it raised, so that a test sees both verdicts of one delivery.
"""

import json
import sys

import stripe
from standardwebhooks.webhooks import Webhook


def verdict(check):
    try:
        check()
        return "verified"
    except Exception as error:  # each library raises its own error class
        return f"{type(error).__name__}: {error}"


def main():
    delivery = json.load(sys.stdin)
    secret, body, headers = delivery["secret"], delivery["body"], delivery["headers"]
    print(
        json.dumps(
            {
                "stripe": verdict(
                    lambda: stripe.WebhookSignature.verify_header(
                        body, headers.get("x-service-signature"), secret, tolerance=300
                    )
                ),
                "standardwebhooks": verdict(lambda: Webhook(secret).verify(body, headers)),
            }
        )
    )


if __name__ == "__main__":
    main()
