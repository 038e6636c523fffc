"""The code an authenticator app shows: pyotp reads the otpauth:// URI Castellan gave and computes
the code of the given instant (the service's manual clock, in Unix seconds).

    python totp_code.py URI UNIX_SECONDS
"""

import sys

import pyotp

totp = pyotp.parse_uri(sys.argv[1])
print(totp.at(int(sys.argv[2])))
