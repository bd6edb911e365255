@rem npm runs package scripts through cmd.exe on Windows. The scripts start with `exec`,
@rem which makes the POSIX shell hand its process to node (so that signals sent to npm
@rem reach the command); cmd.exe has no `exec`, so this file runs the rest of the line.
@%*
