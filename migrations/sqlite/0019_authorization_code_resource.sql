-- The resource server an authorization request named (RFC 8707): the address the code's tokens
-- carry as their audience.
ALTER TABLE authorization_codes ADD COLUMN resource TEXT;
