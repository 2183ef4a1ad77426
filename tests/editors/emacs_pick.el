;;; Terminal Emacs under tmux for `nearsym-find-symbol', as people run it:
;;; with NEARSYM_UI=vertico, Debian's vertico + orderless + marginalia set
;;; up the way their READMEs say (=consult: the same, for
;;; `nearsym-consult-symbol'); otherwise the default completion UI.
;;; One window on alpha/registry.py, and a command the test types to record
;;; where the cursor is.
(add-to-list 'load-path (getenv "PLUGIN"))
(setq inhibit-startup-screen t
      warning-minimum-level :emergency)
(when (member (getenv "NEARSYM_UI") '("vertico" "consult"))
  (require 'vertico)
  (require 'orderless)
  (require 'marginalia)
  (setq completion-styles '(orderless basic)
        completion-category-defaults nil
        completion-category-overrides '((file (styles partial-completion))))
  (vertico-mode 1)
  (marginalia-mode 1))
(require 'nearsym)
(setq nearsym-command (json-parse-string (getenv "NEARSYM_CMD") :array-type 'list))
(nearsym-mode 1)
(find-file (expand-file-name "alpha/registry.py" (getenv "WS")))

(defun nearsym-test-where ()
  "Append the current file, line and column to $OUT."
  (interactive)
  (let ((where (format "%s %d %d\n"
                       (file-relative-name buffer-file-name (getenv "WS"))
                       (line-number-at-pos) (current-column))))
    (with-temp-buffer
      (insert where)
      (append-to-file (point-min) (point-max) (getenv "OUT")))))

(defun nearsym-test-ready ()
  "Append \"ready\" to $OUT once the server has both registries indexed."
  (interactive)
  (while (< (length (nearsym-symbols "register")) 2)
    (sleep-for 0.2))
  (with-temp-buffer
    (insert "ready\n")
    (append-to-file (point-min) (point-max) (getenv "OUT"))))
