-- memory.commit reads every setting once and hands share_sessions to its announcement (0.4.0), whose function
-- now takes it as an argument: the one that read it itself goes.
drop function if exists memory_internal._notify_commit(text, text, text, integer);
