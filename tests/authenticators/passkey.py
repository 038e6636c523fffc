"""A passkey on a software authenticator: soft-webauthn's SoftWebauthnDevice (over python-fido2)
answers the options Castellan gave, as a browser's navigator.credentials would. The device is
kept by the caller between runs, as JSON: its key (PEM), credential id, user handle and counter.

    python passkey.py < REQUEST > ANSWER

REQUEST is {"op": "create" | "get", "options": {"publicKey": ...} with binary fields in
base64url, "origin": ..., "device": DEVICE (for "get"), "counter": N (optional: the counter the
device has before signing, to play a copy of it), "verified": true|false}.
ANSWER is {"credential": ... (PublicKeyCredential.toJSON()), "device": DEVICE}.

soft-webauthn tests the user's presence but not their identity: with "verified" (the default),
the user-verified flag is set as an authenticator that checked a PIN sets it, and an assertion is
signed again over the authenticator data that says so.
"""

import json
import sys
from base64 import urlsafe_b64decode, urlsafe_b64encode

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.utils import sha256
from soft_webauthn import SoftWebauthnDevice

USER_VERIFIED = 0x04


def text(data):
    return urlsafe_b64encode(data).decode("ascii").rstrip("=")


def binary(value):
    return urlsafe_b64decode(value + "=" * (-len(value) % 4))


def device_of(state):
    device = SoftWebauthnDevice()
    device.private_key = serialization.load_pem_private_key(state["key"].encode("ascii"), password=None)
    device.credential_id = binary(state["id"])
    device.rp_id = state["rp_id"]
    device.user_handle = binary(state["user_handle"])
    device.sign_count = state["counter"]
    return device


def state_of(device):
    key = device.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return {
        "key": key.decode("ascii"),
        "id": text(device.credential_id),
        "rp_id": device.rp_id,
        "user_handle": text(device.user_handle),
        "counter": device.sign_count,
    }


def create(request):
    options = request["options"]
    public_key = options["publicKey"]
    public_key["challenge"] = binary(public_key["challenge"])
    public_key["user"]["id"] = binary(public_key["user"]["id"])
    device = SoftWebauthnDevice()
    made = device.create(options, request["origin"])
    attestation = cbor.decode(made["response"]["attestationObject"])
    if request.get("verified", True):
        data = bytearray(attestation["authData"])
        data[32] |= USER_VERIFIED
        attestation["authData"] = bytes(data)
    credential = {
        "id": text(made["rawId"]),
        "rawId": text(made["rawId"]),
        "type": "public-key",
        "response": {
            "clientDataJSON": text(made["response"]["clientDataJSON"]),
            "attestationObject": text(cbor.encode(attestation)),
            "transports": ["internal"],
        },
    }
    return {"credential": credential, "device": state_of(device)}


def get(request):
    device = device_of(request["device"])
    if request.get("counter") is not None:
        device.sign_count = request["counter"]
    options = request["options"]
    options["publicKey"]["challenge"] = binary(options["publicKey"]["challenge"])
    made = device.get(options, request["origin"])
    data = bytearray(made["response"]["authenticatorData"])
    client_data = made["response"]["clientDataJSON"]
    signature = made["response"]["signature"]
    if request.get("verified", True):
        data[32] |= USER_VERIFIED
        signature = device.private_key.sign(bytes(data) + sha256(client_data), ec.ECDSA(hashes.SHA256()))
    credential = {
        "id": text(made["rawId"]),
        "rawId": text(made["rawId"]),
        "type": "public-key",
        "response": {
            "clientDataJSON": text(client_data),
            "authenticatorData": text(bytes(data)),
            "signature": text(signature),
            "userHandle": text(made["response"]["userHandle"]),
        },
    }
    return {"credential": credential, "device": state_of(device)}


request = json.load(sys.stdin)
answer = create(request) if request["op"] == "create" else get(request)
json.dump(answer, sys.stdout)
