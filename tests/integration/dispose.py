#!/usr/bin/python3
"""Deletes one file the way Explorer does: CREATE with DELETE access, then
SET_INFO FileDispositionInformation (DeletePending = 1), then CLOSE; or with
FileDispositionInformationEx (class 64, FILE_DISPOSITION_DELETE) with --ex.

usage: dispose.py PORT SHARE USER PASSWORD PATH [--ex]
"""
import struct
import sys

from impacket import smb3structs
from impacket.smbconnection import SMBConnection

PORT, SHARE, USER, PASSWORD, PATH = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
EX = "--ex" in sys.argv[6:]
FILE_DISPOSITION_INFORMATION = 13
FILE_DISPOSITION_INFORMATION_EX = 64

c = SMBConnection("RINGSMB", "127.0.0.1", sess_port=PORT, timeout=20)
c.login(USER, PASSWORD)
tid = c.connectTree(SHARE)
smb = c.getSMBServer()
fid = smb.create(tid, PATH, desiredAccess=smb3structs.DELETE | smb3structs.FILE_READ_ATTRIBUTES,
                 shareMode=smb3structs.FILE_SHARE_READ | smb3structs.FILE_SHARE_WRITE | smb3structs.FILE_SHARE_DELETE,
                 creationOptions=smb3structs.FILE_NON_DIRECTORY_FILE, creationDisposition=smb3structs.FILE_OPEN,
                 fileAttributes=0)
if EX:
    smb.setInfo(tid, fid, struct.pack("<I", 1), smb3structs.SMB2_0_INFO_FILE, FILE_DISPOSITION_INFORMATION_EX)
else:
    smb.setInfo(tid, fid, b"\x01", smb3structs.SMB2_0_INFO_FILE, FILE_DISPOSITION_INFORMATION)
smb.close(tid, fid)
c.logoff()
print("deleted " + PATH)
