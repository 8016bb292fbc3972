"""Drives the wsmantest stand-in with pywinrm, Ansible's WinRM client.

Used by TestPywinrmAgainstStockServer (pywinrm_test.go): the stand-in's
NTLM and MS-WSMV message encryption checked against a client we did not
write. Reads its task as JSON on stdin and prints the outcome as JSON:

  {"endpoint": ..., "user": ..., "password": ..., "encryption": "auto"|"never",
   "ca": <CA bundle path, for https>, "script": <PowerShell>, "stdin": [<lines>]}

  -> {"stdout": ..., "stderr": ..., "code": N}  or  {"error": <class name>, "message": ...}
"""
import base64
import json
import sys

import xmltodict
from winrm.protocol import Protocol


def send_stdin(protocol, shell_id, command_id, data, end):
    # The Send request as Ansible's winrm connection plugin builds it
    # (_winrm_send_input): pywinrm 0.3.0 has no send_command_input.
    rq = {'env:Envelope': protocol._get_soap_header(
        resource_uri='http://schemas.microsoft.com/wbem/wsman/1/windows/shell/cmd',
        action='http://schemas.microsoft.com/wbem/wsman/1/windows/shell/Send',
        shell_id=shell_id)}
    stream = rq['env:Envelope'].setdefault('env:Body', {}).setdefault('rsp:Send', {}).setdefault('rsp:Stream', {})
    stream['@Name'] = 'stdin'
    stream['@CommandId'] = command_id
    stream['#text'] = base64.b64encode(data.encode('utf-8')).decode('ascii')
    if end:
        stream['@End'] = 'true'
    protocol.send_message(xmltodict.unparse(rq))


def main():
    task = json.load(sys.stdin)
    try:
        p = Protocol(task['endpoint'], transport='ntlm', username=task['user'], password=task['password'],
                     message_encryption=task.get('encryption', 'auto'),
                     ca_trust_path=task.get('ca'),
                     read_timeout_sec=30, operation_timeout_sec=20)
        shell_id = p.open_shell()
        encoded = base64.b64encode(task['script'].encode('utf-16-le')).decode('ascii')
        lines = task.get('stdin') or []
        # Ansible turns console-mode stdin off when it streams stdin.
        command_id = p.run_command(shell_id, 'powershell.exe', ['-NoProfile', '-NonInteractive', '-EncodedCommand', encoded],
                                   console_mode_stdin=not lines)
        for i, line in enumerate(lines):
            send_stdin(p, shell_id, command_id, line, i == len(lines) - 1)
        stdout, stderr, code = p.get_command_output(shell_id, command_id)
        p.cleanup_command(shell_id, command_id)
        p.close_shell(shell_id)
        print(json.dumps({'stdout': stdout.decode('utf-8'), 'stderr': stderr.decode('utf-8'), 'code': code}))
    except Exception as e:  # the test asserts on the class
        print(json.dumps({'error': type(e).__name__, 'message': str(e)}))


if __name__ == '__main__':
    main()
