;;; Terminal Emacs under tmux: the shipped nearsym.el, two windows on two
;;; same-named definitions, and a command the test types to record
;;; nearsym's first answer (asked without sending a focus itself, so only
;;; the window hooks can have moved it).
(add-to-list 'load-path (getenv "PLUGIN"))
(require 'nearsym)
(setq nearsym-command (json-parse-string (getenv "NEARSYM_CMD") :array-type 'list))
(setq inhibit-startup-screen t
      warning-minimum-level :emergency)  ; no *Warnings* window taking a side
(nearsym-mode 1)
(find-file (expand-file-name "beta/registry.py" (getenv "WS")))
(split-window-right)
(find-file (expand-file-name "alpha/registry.py" (getenv "WS")))

(defun nearsym-test-dump ()
  "Append the file of nearsym's first answer for `register' to $OUT."
  (interactive)
  (let* ((answer (jsonrpc-request (nearsym--connection (file-name-as-directory (expand-file-name (getenv "WS")))) :workspace/symbol
                                  (list :query "register")))
         (first (and (> (length answer) 1) (aref answer 0))))
    (with-temp-buffer
      (insert (if first (file-relative-name (nearsym--file first) (getenv "WS")) (format "none:%S:%s" (length answer) default-directory)) "\n")
      (append-to-file (point-min) (point-max) (getenv "OUT")))))
