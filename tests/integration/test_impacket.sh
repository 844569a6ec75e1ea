#!/usr/bin/env bash
# impacket (Debian's python3-impacket 0.10, a client nobody here wrote)
# over SMB 2.0.2, 2.1, 3.0 and 3.0.2 (impacket_client.py): shares listed,
# 200 KB put in the share's root and read back, a directory made, a rename
# into it, the listing, the deletes. impacket takes a directory-lease path
# when the server offers SMB2_GLOBAL_CAP_DIRECTORY_LEASING, which it never
# asks for: offered unasked, its first CREATE in the root failed.
# Then what the admin reads in the log: an NTLMv1 login refused ("NTLMv1
# is not accepted") and an SMB 2.1 session at a share with smb3 encryption
# = required ("share requires encryption; client dialect 2.1"), each once
# per connection, with the client's address.
source "$(dirname "$0")/lib.sh"

write_config
owned_dir "$T/secure"
add_share secure "$T/secure" "writeable = yes" "smb3 encryption = required"
add_user alice 'secret-A1'
start_server
check "python3-impacket is installed (scripts/install-deps.sh)" /usr/bin/python3 -c 'import impacket'
check "impacket over 2.0.2, 2.1, 3.0 and 3.0.2" \
  /usr/bin/python3 "$RINGSMB_SOURCE_DIR/tests/integration/impacket_client.py" "$PORT" share alice 'secret-A1' secure
grep -E "^(PASS|FAIL)" "$T/check.out" || true
check "the log says why the NTLMv1 login was refused, with the client's address" \
  grep -qE "127\.0\.0\.1: login of 'alice' refused: NTLMv1 is not accepted .*event=ntlmv1_refused" "$T/server.log"
check "the log says why the SMB 2.1 tree connect was refused" \
  grep -qE "127\.0\.0\.1: tree connect of 'alice' to \[secure\] refused: share requires encryption; client dialect 2\.1" \
  "$T/server.log"
finish
