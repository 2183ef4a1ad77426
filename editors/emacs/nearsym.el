;;; nearsym.el --- Go to symbol in workspace with nearsym, beside eglot  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1") (jsonrpc "1.0.9"))
;; Keywords: tools, languages

;;; Commentary:

;; eglot runs one server per major mode and project, so an eglot entry for
;; nearsym would replace pyright or pylsp.  This is a small client of its
;; own, on Emacs' built-in jsonrpc, so nearsym runs *beside* eglot:
;;
;; - `nearsym-mode' (global) starts `nearsym serve' per project, sends
;;   didOpen / didChange / didClose for source buffers, and sends
;;   `nearsym/didFocus' whenever the selected window or its buffer changes
;;   (skipping repeats), so the server knows which file you are in.
;; - `M-x nearsym-find-symbol': completing-read in nearsym's order,
;;   re-asking the server as you type.
;; - An xref backend, so `xref-find-apropos' (C-M-.) lists nearsym's order.
;;
;;   (add-to-list 'load-path "/path/to/nearsym/editors/emacs")
;;   (require 'nearsym)
;;   (nearsym-mode 1)

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'url-util)
(require 'xref)

(defgroup nearsym nil
  "Go to symbol in workspace, nearest first."
  :group 'tools)

(defcustom nearsym-command '("nearsym" "serve")
  "Command that starts the nearsym language server."
  :type '(repeat string))

(defcustom nearsym-initialization-options nil
  "Plist sent as initializationOptions (e.g. (:maxResults 200))."
  :type 'plist)

(defcustom nearsym-modes
  '(python-mode python-ts-mode js-mode js-ts-mode typescript-mode typescript-ts-mode
    tsx-ts-mode go-mode go-ts-mode rust-mode rust-ts-mode java-mode java-ts-mode
    c-mode c-ts-mode c++-mode c++-ts-mode csharp-mode ruby-mode ruby-ts-mode php-mode
    sh-mode bash-ts-mode lua-mode kotlin-mode scala-mode swift-mode elixir-mode
    haskell-mode tuareg-mode zig-mode julia-mode)
  "Major modes whose buffers nearsym is told about."
  :type '(repeat symbol))

(defvar nearsym--connections (make-hash-table :test #'equal)
  "Project root -> running jsonrpc connection.")
(defvar nearsym--last-focus nil "URI last sent with nearsym/didFocus.")
(defvar-local nearsym--version 0)
(defvar-local nearsym--opened nil)
(defvar-local nearsym--change-timer nil)

(defun nearsym--uri (file)
  "The file: URI of FILE."
  (concat "file://" (url-hexify-string (expand-file-name file) url-path-allowed-chars)))

(defun nearsym--root ()
  "The current project's root, or `default-directory'."
  (let ((project (project-current)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) default-directory)))))

(defun nearsym--handle-request (_conn _method _params)
  "Answer the server's requests (none are needed) with null."
  nil)

(defun nearsym--connection (&optional root)
  "The running connection for ROOT (default: this project), started if needed."
  (let* ((root (or root (nearsym--root)))
         (conn (gethash root nearsym--connections)))
    (if (and conn (jsonrpc-running-p conn))
        conn
      (let* ((default-directory root)
             (process (make-process
                       :name (format "nearsym %s" root)
                       :command nearsym-command
                       :connection-type 'pipe
                       :coding 'utf-8-emacs-unix
                       :noquery t
                       :stderr (get-buffer-create " *nearsym stderr*"))))
        (setq conn (make-instance 'jsonrpc-process-connection
                                  :name (format "nearsym %s" root)
                                  :process process
                                  :request-dispatcher #'nearsym--handle-request
                                  :notification-dispatcher #'ignore))
        (jsonrpc-request conn :initialize
                         (list :processId (emacs-pid)
                               :rootUri (nearsym--uri root)
                               :workspaceFolders (vector (list :uri (nearsym--uri root)
                                                               :name root))
                               :initializationOptions (or nearsym-initialization-options
                                                          (make-hash-table))
                               :capabilities (make-hash-table)))
        (jsonrpc-notify conn :initialized (make-hash-table))
        (puthash root conn nearsym--connections)
        conn))))

(defun nearsym--source-buffer-p (&optional buffer)
  "Whether BUFFER visits a file in a mode nearsym reads."
  (with-current-buffer (or buffer (current-buffer))
    (and buffer-file-name (apply #'derived-mode-p nearsym-modes))))

(defun nearsym--did-open ()
  "Tell the server about this buffer's text."
  (when (and (nearsym--source-buffer-p) (not nearsym--opened))
    (setq nearsym--opened t nearsym--version 1)
    (jsonrpc-notify (nearsym--connection) :textDocument/didOpen
                    (list :textDocument
                          (list :uri (nearsym--uri buffer-file-name)
                                :languageId (string-remove-suffix
                                             "-mode" (symbol-name major-mode))
                                :version nearsym--version
                                :text (save-restriction
                                        (widen)
                                        (buffer-substring-no-properties
                                         (point-min) (point-max))))))))

(defun nearsym--send-change (buffer)
  "Send BUFFER's whole text (full sync, debounced)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq nearsym--change-timer nil)
      (when nearsym--opened
        (cl-incf nearsym--version)
        (jsonrpc-notify (nearsym--connection) :textDocument/didChange
                        (list :textDocument (list :uri (nearsym--uri buffer-file-name)
                                                  :version nearsym--version)
                              :contentChanges
                              (vector (list :text (save-restriction
                                                    (widen)
                                                    (buffer-substring-no-properties
                                                     (point-min) (point-max)))))))))))

(defun nearsym--after-change (&rest _)
  "Schedule a didChange for this buffer."
  (when nearsym--opened
    (when nearsym--change-timer (cancel-timer nearsym--change-timer))
    (setq nearsym--change-timer
          (run-with-idle-timer 0.1 nil #'nearsym--send-change (current-buffer)))))

(defun nearsym--did-close ()
  "Tell the server this buffer is gone (it goes back to the file on disk)."
  (when nearsym--opened
    (setq nearsym--opened nil)
    (ignore-errors
      (jsonrpc-notify (nearsym--connection) :textDocument/didClose
                      (list :textDocument (list :uri (nearsym--uri buffer-file-name)))))))

(defun nearsym-focus (&rest _)
  "Send nearsym/didFocus for the selected window's buffer, skipping repeats."
  (let ((buffer (window-buffer (selected-window))))
    (when (nearsym--source-buffer-p buffer)
      (with-current-buffer buffer
        (nearsym--did-open)
        (let ((uri (nearsym--uri buffer-file-name)))
          (unless (equal uri nearsym--last-focus)
            (setq nearsym--last-focus uri)
            (jsonrpc-notify (nearsym--connection) :nearsym/didFocus
                            (list :textDocument (list :uri uri)))))))))

(defun nearsym--buffer-setup ()
  "Hooked into every file buffer."
  (when (nearsym--source-buffer-p)
    (nearsym--did-open)
    (add-hook 'after-change-functions #'nearsym--after-change nil t)
    (add-hook 'kill-buffer-hook #'nearsym--did-close nil t)))

;;;###autoload
(define-minor-mode nearsym-mode
  "Keep nearsym told about your buffers and the one you are in."
  :global t
  (if nearsym-mode
      (progn
        (add-hook 'after-change-major-mode-hook #'nearsym--buffer-setup)
        (add-hook 'window-selection-change-functions #'nearsym-focus)
        (add-hook 'window-buffer-change-functions #'nearsym-focus)
        (add-hook 'xref-backend-functions #'nearsym--xref-backend 90)
        (dolist (buffer (buffer-list))
          (with-current-buffer buffer (nearsym--buffer-setup)))
        (run-with-idle-timer 0 nil #'nearsym-focus))
    (remove-hook 'after-change-major-mode-hook #'nearsym--buffer-setup)
    (remove-hook 'window-selection-change-functions #'nearsym-focus)
    (remove-hook 'window-buffer-change-functions #'nearsym-focus)
    (remove-hook 'xref-backend-functions #'nearsym--xref-backend)))

(defun nearsym-symbols (query)
  "nearsym's answer for QUERY, in its order: a list of plists."
  (let ((conn (nearsym--connection)))
    (nearsym-focus)
    (append (jsonrpc-request conn :workspace/symbol (list :query query)) nil)))

(defun nearsym--file (symbol)
  "The file of SYMBOL (a WorkspaceSymbol plist)."
  (url-unhex-string
   (string-remove-prefix "file://" (plist-get (plist-get symbol :location) :uri))))

(defun nearsym--line (symbol)
  "The 1-based line of SYMBOL."
  (1+ (or (plist-get (plist-get (plist-get (plist-get symbol :location) :range) :start)
                     :line)
          0)))

(defun nearsym--label (symbol)
  "How SYMBOL reads in a list."
  (let ((container (plist-get symbol :containerName)))
    (format "%s%s  %s:%d"
            (if (and container (not (eq container :null))) (concat container ".") "")
            (plist-get symbol :name)
            (file-relative-name (nearsym--file symbol) (nearsym--root))
            (nearsym--line symbol))))

(defun nearsym--goto (symbol)
  "Visit SYMBOL's definition."
  (xref-push-marker-stack)
  (find-file (nearsym--file symbol))
  (goto-char (point-min))
  (forward-line (1- (nearsym--line symbol)))
  (let ((column (plist-get (plist-get (plist-get (plist-get symbol :location) :range)
                                      :start)
                           :character)))
    (when column (forward-char (min column (- (line-end-position) (point)))))))

;;;###autoload
(defun nearsym-find-symbol ()
  "Pick a definition in nearsym's order; the list follows what you type."
  (interactive)
  (let* ((table (make-hash-table :test #'equal))
         (collection
          (lambda (string pred action)
            (if (eq action 'metadata)
                '(metadata (category . nearsym-symbol)
                           (display-sort-function . identity)
                           (cycle-sort-function . identity))
              (let ((labels (mapcar (lambda (symbol)
                                      (let ((label (nearsym--label symbol)))
                                        (puthash label symbol table)
                                        label))
                                    (nearsym-symbols string))))
                (complete-with-action action labels "" pred)))))
         (choice (completing-read "Symbol: " collection nil t)))
    (when-let ((symbol (gethash choice table)))
      (nearsym--goto symbol))))

(defun nearsym--xref-backend ()
  "nearsym as an xref backend (for `xref-find-apropos')."
  (when nearsym-mode 'nearsym))

(cl-defmethod xref-backend-apropos ((_backend (eql nearsym)) pattern)
  "nearsym's definitions for PATTERN, in its order."
  (mapcar (lambda (symbol)
            (xref-make (nearsym--label symbol)
                       (xref-make-file-location (nearsym--file symbol)
                                                (nearsym--line symbol) 0)))
          (nearsym-symbols pattern)))

;;;###autoload
(defun nearsym-apropos ()
  "`xref-find-apropos' answered by nearsym even where eglot is the xref
backend (eglot's comes first in its buffers)."
  (interactive)
  (let ((xref-backend-functions (list #'nearsym--xref-backend)))
    (call-interactively #'xref-find-apropos)))

(cl-defmethod xref-backend-identifier-at-point ((_backend (eql nearsym)))
  "The symbol at point."
  (thing-at-point 'symbol t))

(provide 'nearsym)
;;; nearsym.el ends here
