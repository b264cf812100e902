"""Robot action learning on PushT: action codecs, flow-matching policies (FAFM), evaluators and FreeAct."""
