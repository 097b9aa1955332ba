-- memory.commit reads every setting once and hands them to its announcement (0.4.0): _notify_commit takes
-- them, and _notify whether notifications are on; the versions that read settings themselves go.
drop function if exists memory_internal._notify_commit(text, text, text, integer);
drop function if exists memory_internal._notify(text, jsonb);
