#!/usr/bin/python3
"""An SMB client that logs on with the service ticket of a ccache as is.

impacket builds the AP-REQ from the cifs/HOST ticket in KRB5CCNAME itself
(no TGT, no KDC), which is what the tickets pac_ticket.py makes need:
Samba's client only takes a ccache with a TGT of MIT's making.
Prints "OK" or the NT status of the failure ("NT_STATUS_ACCESS_DENIED").

usage: pac_client.py HOST PORT USER REALM SHARE put LOCAL REMOTE
                                                get REMOTE LOCAL
                                                ls
"""
import sys

from impacket.smbconnection import SessionError, SMBConnection


def main():
    host, port, user, realm, share, op = sys.argv[1:7]
    args = sys.argv[7:]
    try:
        conn = SMBConnection(host, "127.0.0.1", sess_port=int(port), timeout=20)
        conn.kerberosLogin(user, "", realm, useCache=True)
        if op == "ls":
            for f in conn.listPath(share, "*"):
                print(f.get_longname())
        elif op == "put":
            with open(args[0], "rb") as f:
                conn.putFile(share, args[1], f.read)
        elif op == "get":
            with open(args[1], "wb") as f:
                conn.getFile(share, args[0], f.write)
        conn.logoff()
    except SessionError as e:
        print("NT_" + e.getErrorString()[0])
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
