// Passkeys on the service's pages: sign-in by a button, by autofill on the username field and after
// a typed name, and registration on the page of a person's sign-in methods. The pages work
// without this script, with passwords: its forms stay hidden until it finds WebAuthn.
"use strict";
(() => {
  if (!window.PublicKeyCredential) return;

  const bytes = (text) => {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  };
  const text = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer)))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  // The credential as the service reads it: PublicKeyCredential.toJSON(), written out for browsers
  // that do not have it yet.
  const described = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: text(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = text(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      if (r.userHandle) response.userHandle = text(r.userHandle);
    }
    return JSON.stringify({ id: credential.id, rawId: text(credential.rawId), type: credential.type, response });
  };

  const signIn = document.getElementById("passkey-sign-in");
  if (signIn) {
    const problem = document.getElementById("passkey-error");
    const request = (allowed) => ({
      challenge: bytes(signIn.dataset.challenge),
      rpId: signIn.dataset.rp,
      userVerification: "required",
      timeout: 300000,
      allowCredentials: allowed.map((c) => ({ type: "public-key", id: bytes(c.id) })),
    });
    const send = (credential) => {
      signIn.elements.credential.value = described(credential);
      signIn.submit();
    };
    // Autofill: the browser offers the realm's passkeys on the username field.
    let autofill = null;
    if (PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then((available) => {
        if (!available) return;
        autofill = new AbortController();
        navigator.credentials
          .get({ mediation: "conditional", signal: autofill.signal, publicKey: request([]) })
          .then(send, () => {});
      });
    }
    signIn.hidden = false;
    signIn.addEventListener("submit", async (event) => {
      event.preventDefault();
      problem.hidden = true;
      if (autofill) autofill.abort();
      // A typed name: the passkeys of that person (the service answers as much for any name).
      let allowed = [];
      const name = document.getElementById("username");
      if (name && name.value.trim()) {
        const body = new URLSearchParams(new FormData(signIn));
        body.set("username", name.value.trim());
        try {
          const answer = await fetch(signIn.dataset.lookup, { method: "POST", body, credentials: "same-origin" });
          if (answer.ok) allowed = (await answer.json()).allowCredentials || [];
        } catch (_) {
          allowed = [];
        }
      }
      try {
        send(await navigator.credentials.get({ publicKey: request(allowed) }));
      } catch (_) {
        problem.hidden = false;
      }
    });
  }

  // A sign-up with a passkey instead of a password: the account's passkey is made first, named
  // by the username typed, and the form goes with it.
  const signUp = document.getElementById("passkey-sign-up");
  if (signUp) {
    const form = signUp.form;
    const problem = document.getElementById("passkey-error");
    signUp.hidden = false;
    signUp.addEventListener("click", async () => {
      problem.hidden = true;
      const { username, email } = form.elements;
      if (!username.reportValidity() || !email.reportValidity()) return;
      const options = JSON.parse(signUp.dataset.options).publicKey;
      options.challenge = bytes(options.challenge);
      options.user.id = bytes(options.user.id);
      options.user.name = username.value.trim();
      options.user.displayName = username.value.trim();
      try {
        form.elements.credential.value = described(await navigator.credentials.create({ publicKey: options }));
        form.submit();
      } catch (_) {
        problem.hidden = false;
      }
    });
  }

  const register = document.getElementById("passkey-register");
  if (register) {
    const problem = document.getElementById("passkey-error");
    register.hidden = false;
    register.addEventListener("submit", async (event) => {
      event.preventDefault();
      problem.hidden = true;
      const options = JSON.parse(register.dataset.options).publicKey;
      options.challenge = bytes(options.challenge);
      options.user.id = bytes(options.user.id);
      options.excludeCredentials = options.excludeCredentials.map((c) => ({ type: c.type, id: bytes(c.id) }));
      try {
        register.elements.credential.value = described(await navigator.credentials.create({ publicKey: options }));
        register.submit();
      } catch (_) {
        problem.hidden = false;
      }
    });
  }
})();
