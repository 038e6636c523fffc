#!/usr/bin/env python3
"""Writes N people as JSON Lines for the user import, with names and addresses a search can tell
apart: fifty first names, a hundred last names and twenty companies, cycled at different strides.

usage: people.py N
"""
import json
import sys

FIRST = """amelia ada alan grace katherine margaret hedy barbara frances radia john linus ken dennis
bjarne guido james anders brian donald edsger tony leslie niklaus robin shafi silvio whitfield
martin vint bob tim marc larry sergey satya sundar susan sheryl ginni ursula mary lisa
safra meg carly indra ruth jean carol""".split()
LAST = """wong lovelace turing hopper johnson hamilton lamarr liskov allen perlman backus torvalds
thompson ritchie stroustrup rossum gosling hejlsberg kernighan knuth dijkstra hoare lamport
wirth milner goldwasser micali diffie hellman cerf kahn berners andreessen page brin nadella
pichai wojcicki sandberg rometty burns barra su catz whitman fiorina nooyi porat cheriton
estrin goldberg bartik sammet clarke easley keller hicks mitchell shaw rich shannon zuse
babbage boole church godel neumann kleene post curry scott floyd tarjan hennessy patterson
cocke cray amdahl moore noyce grove jobs wozniak gates allen2 ellison joy bechtolsheim
khosla metcalfe boggs kay engelbart sutherland licklider minsky mccarthy newell simon feigenbaum
reddy pearl bengio hinton lecun""".split()
COMPANY = """acme globex initech umbrella hooli vandelay wayne stark cyberdyne tyrell soylent
massive aperture weyland oscorp gringotts monarch dunder pied nakatomi""".split()


def person(n: int) -> dict:
    """The n-th person."""
    first, last = FIRST[n % len(FIRST)], LAST[(n // 7) % len(LAST)]
    company = COMPANY[(n // 3) % len(COMPANY)]
    return {
        "username": f"{first}.{last}{n:07d}",
        "email": f"{first}.{last}{n:07d}@{company}.example",
        "firstName": first.capitalize(), "lastName": last.capitalize(), "emailConfirmed": True,
    }


def main() -> None:
    for n in range(int(sys.argv[1])):
        print(json.dumps(person(n)))


if __name__ == "__main__":
    main()
