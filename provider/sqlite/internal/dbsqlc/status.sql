-- name: StatusSeqRead :one
SELECT value FROM status_seq WHERE id = 1;

-- name: StatusSeqStore :exec
UPDATE status_seq SET value = @value WHERE id = 1;
