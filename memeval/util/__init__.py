"""Small helpers with no home of their own: close-match suggestions (:mod:`.suggest`), the
server nonce handshake (:mod:`.nonce`), waiting on threads without missing Ctrl-C
(:mod:`.interruptible`) and the user's folders (:mod:`.userdirs`)."""
